#!/usr/bin/env bash
# Runs every experiment of docs/quality.md and stores the raw permlab output
# (human lines and "LAB key=value" lines) under bench/quality/data/, one file
# per experiment; then bench/quality/make_report.py turns them into the plots
# and tables and writes docs/quality.md.
#
#   bench/quality/run_all.sh               # all but "deeper", ~10 minutes on 2 cores
#   bench/quality/run_all.sh deeper        # 10^8-sample points, ~6 minutes
#   bench/quality/run_all.sh butterfly cli # only these sections
#   /usr/bin/python3 bench/quality/make_report.py
#
# Sections: rounds deep mmd butterfly plan cli adjacency, and deeper (not run
# by default: 10^8 samples, ~6 minutes; run it as a second command). Environment:
# PERMLAB (default build/permlab), EXTSHUFFLE (default build/extshuffle),
# THREADS (default 2). Every number is reproducible: each sample's randomness
# is the lab stream (seed, Purpose::kLab, sample) or a seed drawn from it, and
# results do not depend on THREADS.
set -euo pipefail
cd "$(dirname "$0")/../.."
PERMLAB=${PERMLAB:-build/permlab}
EXTSHUFFLE=${EXTSHUFFLE:-build/extshuffle}
THREADS=${THREADS:-2}
DATA=bench/quality/data
mkdir -p "$DATA"
sections=("$@")
[ ${#sections[@]} -eq 0 ] && sections=(rounds deep mmd butterfly plan cli adjacency)

# Runs one permlab command, echoing it (as "CMD ...") into the data file so
# the report can show the exact command next to its numbers.
lab() {
  local out=$1
  shift
  echo "CMD permlab $* -j $THREADS" >>"$out"
  "$PERMLAB" "$@" -j "$THREADS" >>"$out"
}
exact() {  # butterfly: no threads option
  local out=$1
  shift
  echo "CMD permlab $*" >>"$out"
  "$PERMLAB" "$@" >>"$out"
}
section() { echo "== $1 ($(date +%T))" >&2; }

for s in "${sections[@]}"; do
  SECONDS=0
  case $s in
  rounds)
    # Mitchell et al. Fig. 6: chi-square at n = 5 against VariablePhilox
    # rounds, 10^6 permutations per point as in the paper; on the project's
    # domain (shuffle_records) and on 2^4, the minimum before commit 756127a.
    section "chi2 at n = 5 vs rounds"
    f=$DATA/chi2_rounds.txt; : >"$f"
    for r in $(seq 1 32); do lab "$f" chi2 --n 5 --rounds "$r" --samples 1000000 --seed 1; done
    f=$DATA/chi2_rounds_domain4.txt; : >"$f"
    for r in $(seq 1 32); do lab "$f" chi2 --n 5 --rounds "$r" --domain-bits 4 --samples 1000000 --seed 1; done
    ;;
  deep)
    # Beyond the paper: 10^7 permutations per point on each domain width
    # (2^4 and 2^5 were the project's for n <= 16 and 17..32 until commit
    # 756127a), through the inverse of VariablePhilox (tests/lab checks it
    # equals the real shuffle); plus the real shuffle_records path.
    section "chi2 at n = 5 with 10^7 samples vs rounds and domain width"
    f=$DATA/chi2_deep.txt; : >"$f"
    for bits in 4 5 6; do
      for r in 20 24 28 32; do lab "$f" chi2 --n 5 --rounds "$r" --domain-bits "$bits" --samples 10000000 --seed 7; done
    done
    for seed in 8 9; do lab "$f" chi2 --n 5 --rounds 24 --domain-bits 4 --samples 10000000 --seed "$seed"; done
    for bits in 7 8 9 10 11 12 16; do lab "$f" chi2 --n 5 --rounds 24 --domain-bits "$bits" --samples 10000000 --seed 7; done
    # The real shuffle_records path on the project's domain (2^8 for these n).
    lab "$f" chi2 --n 5 --rounds 24 --samples 10000000 --seed 7
    lab "$f" chi2 --n 20 --pattern-records 5 --rounds 24 --samples 10000000 --seed 7
    lab "$f" position --n 20 --rounds 24 --samples 10000000 --seed 7
    for seed in 8 9 10; do lab "$f" position --n 20 --rounds 24 --domain-bits 8 --samples 10000000 --seed "$seed"; done
    # The same 20-record position test on the domain 2^5 it used before.
    for r in 24 32; do lab "$f" position --n 20 --rounds "$r" --domain-bits 5 --samples 10000000 --seed 7; done
    ;;
  mmd)
    # Mitchell et al. section 5, Figs. 7-8: MMD with the Mallows kernel.
    section "MMD"
    f=$DATA/mmd.txt; : >"$f"
    for n in 5 100 1000; do
      lab "$f" mmd --n "$n" --rounds 24 --samples 100000 --seed 2
      lab "$f" mmd --n "$n" --generator lcg --samples 100000 --seed 2
    done
    f=$DATA/mmd_rounds.txt; : >"$f"
    for n in 5 100; do
      for r in $(seq 1 32); do lab "$f" mmd --n "$n" --rounds "$r" --samples 100000 --seed 3; done
    done
    ;;
  butterfly)
    # Waechter et al. sections 3-5, exact (enumeration / propagation), and
    # the sampled network checked against the exact matrices.
    section "butterfly networks"
    f=$DATA/butterfly_exact.txt; : >"$f"
    for v in padded omitted; do
      for n in 3 5; do exact "$f" butterfly --variant "$v" --n "$n" --iterations 6; done
    done
    f=$DATA/butterfly_sampled.txt; : >"$f"
    for v in padded omitted; do
      for n in 3 5; do lab "$f" position --generator butterfly --variant "$v" --n "$n" --samples 1000000 --seed 4; done
    done
    lab "$f" position --generator butterfly --variant padded --n 100 --samples 100000 --seed 4
    lab "$f" position --generator butterfly --variant padded --iterations 3 --n 100 --samples 100000 --seed 4
    lab "$f" mmd --generator butterfly --variant padded --n 100 --samples 100000 --seed 4
    lab "$f" mmd --generator butterfly --variant padded --iterations 3 --n 100 --samples 100000 --seed 4
    f=$DATA/butterfly_shift.txt; : >"$f"
    for n in 3 5; do
      for v in padded omitted; do exact "$f" butterfly --variant "$v" --n "$n" --iterations 3 --shift-sweep; done
    done
    for n in 304 400; do exact "$f" butterfly --variant omitted --n "$n" --iterations 3 --shift-sweep; done
    f=$DATA/butterfly_bias_n.txt; : >"$f"
    for n in $(seq 2 512); do
      "$PERMLAB" butterfly --variant omitted --n "$n" --iterations 6 | grep '^LAB test=butterfly_bias' >>"$f"
    done
    ;;
  plan)
    # The whole canonical plan in RAM (driver::shuffle_in_memory) with small
    # L and F so that 2, 3 and 4 levels occur.
    section "whole plan"
    f=$DATA/plan.txt; : >"$f"
    lab "$f" chi2 --generator plan --leaf-records 1 --fanout 2 --n 4 --samples 1000000 --seed 5
    lab "$f" chi2 --generator plan --leaf-records 2 --fanout 2 --n 5 --samples 1000000 --seed 5
    lab "$f" chi2 --generator plan --leaf-records 4 --fanout 2 --n 5 --samples 1000000 --seed 5
    lab "$f" chi2 --generator plan --leaf-records 16 --fanout 4 --n 1000 --pattern-records 4 --stride 1 --samples 48000 --seed 5
    lab "$f" chi2 --generator plan --leaf-records 16 --fanout 4 --n 1000 --pattern-records 4 --stride 333 --samples 48000 --seed 5
    lab "$f" mmd --generator plan --leaf-records 16 --fanout 4 --n 100 --samples 100000 --seed 5
    lab "$f" mmd --generator plan --leaf-records 16 --fanout 4 --n 1000 --samples 50000 --seed 5
    matrix=$(mktemp)
    lab "$f" position --generator plan --leaf-records 16 --fanout 4 --n 1000 --samples 20000 --seed 5 \
      --matrix-out "$matrix"
    # Keep only the histogram of the 10^6 cell counts ("count cells"), not the 7 MB matrix.
    awk -F, '{ for (i = 1; i <= NF; i++) h[int($i * 20000 + 0.5)]++ } END { for (k in h) print k, h[k] }' "$matrix" |
      sort -n >"$DATA/plan_position_1000_histogram.txt"
    rm -f "$matrix"
    lab "$f" position --generator bijective --n 1000 --samples 20000 --seed 5
    ;;
  cli)
    # The real binary, black box, one process per seed. The second run shuffles
    # 1024-byte records streamed through scratch space (-S 8K) with the same
    # seeds: the contract says it applies the same permutations, so its
    # statistic must equal the first run's exactly.
    section "extshuffle CLI"
    f=$DATA/cli.txt; : >"$f"
    lab "$f" chi2 --generator cli --binary "$EXTSHUFFLE" --leaf-records 2 --fanout 2 --n 5 --samples 6000 --seed 6
    lab "$f" chi2 --generator cli --binary "$EXTSHUFFLE" --leaf-records 2 --fanout 2 --record-size 1024 --memory 8K \
      --n 5 --samples 6000 --seed 6
    lab "$f" chi2 --generator cli --binary "$EXTSHUFFLE" --leaf-records 1 --fanout 2 --n 4 --samples 6000 --seed 6
    lab "$f" position --generator cli --binary "$EXTSHUFFLE" --leaf-records 16 --fanout 4 --record-size 64 \
      --memory 8K --n 100 --samples 2000 --seed 6
    lab "$f" adjacency --generator cli --binary "$EXTSHUFFLE" --leaf-records 16 --fanout 4 --record-size 64 \
      --memory 8K --n 100 --samples 2000 --seed 6
    ;;
  deeper)
    # Not in the default list (~6 minutes): 10^8 permutations where 10^7 left
    # a doubt, and the widths above the small ones (docs/quality.md, "Beyond
    # the paper").
    section "chi2 at n = 5 with 10^8 samples"
    f=$DATA/chi2_deeper.txt; : >"$f"
    lab "$f" chi2 --n 5 --rounds 28 --domain-bits 4 --samples 100000000 --seed 10
    lab "$f" chi2 --n 5 --rounds 32 --domain-bits 4 --samples 100000000 --seed 10
    lab "$f" chi2 --n 5 --rounds 32 --domain-bits 5 --samples 100000000 --seed 10
    for bits in 6 7; do lab "$f" chi2 --n 5 --rounds 24 --domain-bits "$bits" --samples 100000000 --seed 10; done
    lab "$f" position --n 20 --rounds 24 --domain-bits 8 --samples 100000000 --seed 11
    ;;
  adjacency)
    section "adjacency"
    f=$DATA/adjacency.txt; : >"$f"
    for r in 4 6 8 24; do lab "$f" adjacency --n 100 --rounds "$r" --samples 100000 --seed 8; done
    lab "$f" adjacency --generator lcg --n 100 --samples 100000 --seed 8
    lab "$f" adjacency --generator butterfly --variant padded --n 100 --samples 100000 --seed 8
    lab "$f" adjacency --generator plan --leaf-records 16 --fanout 4 --n 1000 --samples 20000 --seed 8
    ;;
  *)
    echo "run_all.sh: unknown section '$s'" >&2
    exit 2
    ;;
  esac
  echo "   $s: ${SECONDS} s" >&2
  echo "SECTION $s seconds=$SECONDS" >>"$DATA/timings.txt"
done
