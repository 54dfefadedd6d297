#!/usr/bin/env bash
# The measurements of the scale-out issue: extshuffle-mpi on P = 1..4 ranks of
# this machine (loopback), against plain extshuffle on the same input.
#   p1       P = 1 under MPI against extshuffle: 1 GiB of 8-byte records,
#            -S 256M, default threads, runs alternated;
#   strong   1 GiB of 8-byte records on P = 1..4 ranks, -S 256M per rank, -j 1;
#   weak     256 MiB of 8-byte records per rank on P = 1..4, -S 128M per rank, -j 1;
#   text     512 MiB of 10-50-byte lines on P = 1..4, -S 256M per rank, -j 1
#            (the counting pass split across the ranks; 17 chunks of 2^20
#            lines, so that 4 ranks get 4 or 5 each).
# Every extshuffle-mpi output is compared (cmp) with extshuffle's. Each run
# appends its lines to the results file: "BENCH mpi series=S ranks=P run=K
# tool=T seconds=W cpu_seconds=C load=L" (wall time around mpirun or
# extshuffle, user + system CPU time of its process tree, the load average
# before it ended: this VM is shared with other work), then the --stats
# lines (RESULT, and RANK per rank with the per-phase times, bytes sent and
# peak RSS). bench/mpi_report.py makes the tables of docs/benchmarks.md.
#
# usage: bench/mpi_scaling.sh [SERIES...]      (default: p1 strong weak text)
# environment: BUILD_DIR=build  DIR=${TMPDIR:-/tmp}/extshuffle-mpi-bench
#              OUT=bench/results/mpi_scaling.txt  REPEATS=5 (p1: runs of each tool)
#              MPIRUN_BIND=none (mpirun --bind-to; Open MPI's own default binds
#              a rank to one core when it starts two or fewer)
#              SCALING_REPEATS=3 (strong, weak, text: runs of each P and of
#              its extshuffle reference, alternated: this VM's timings wander
#              by tens of percent from run to run)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
build=${BUILD_DIR:-build}
dir=${DIR:-${TMPDIR:-/tmp}/extshuffle-mpi-bench}
out=${OUT:-bench/results/mpi_scaling.txt}
repeats=${REPEATS:-5}
scaling_repeats=${SCALING_REPEATS:-3}
bind=${MPIRUN_BIND:-none}
series=${*:-p1 strong weak text}
mkdir -p "$dir/scratch" "$(dirname "$out")"
: >"$out"
export OMPI_MCA_btl_vader_single_copy_mechanism=none
[ "$(id -u)" -eq 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

{
  echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) $(uname -n) $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB RAM"
  echo "# $(mpirun --version | head -1); extshuffle $(git rev-parse --short HEAD)"
} >>"$out"

input() {  # NAME BYTES [MIN MAX]: the input, generated once
  local path="$dir/$1"
  [ -f "$path" ] && [ "$(stat -c %s "$path")" -eq "$(numfmt --from=iec "$2")" ] && { echo "$path"; return; }
  if [ $# -gt 2 ]; then
    "$build/bench/generate_lines" "$path" "$2" 1 "$3" "$4" >&2
  else
    "$build/bench/generate_lines" "$path" "$2" 1 --binary >&2
  fi
  echo "$path"
}

# run SERIES RANKS RUN TOOL INPUT ARGS...: one timed run, its lines appended.
run() {
  local name=$1 ranks=$2 k=$3 tool=$4 in=$5
  shift 5
  local output="$dir/out-$tool" start end status
  rm -f "$output"
  sync
  start=$(date +%s.%N)
  # GNU time: the CPU seconds of the whole process tree (mpirun's ranks
  # included), steadier than wall time on a machine shared with other work.
  if [ "$tool" = extshuffle ]; then
    /usr/bin/time -f "%U %S" -o "$dir/cpu" "$build/extshuffle" "$in" "$output" --seed 7 -T "$dir/scratch" --stats \
      "$@" 2>"$dir/stats"
  else
    # --bind-to none: Open MPI binds each rank to one core by default when
    # it starts two or fewer, and a rank's threads would share that core.
    /usr/bin/time -f "%U %S" -o "$dir/cpu" mpirun -q --oversubscribe --bind-to "$bind" -np "$ranks" \
      "$build/extshuffle-mpi" "$in" \
      "$output" --seed 7 -T "$dir/scratch" --stats "$@" 2>"$dir/stats"
  fi
  status=$?
  end=$(date +%s.%N)
  echo "BENCH mpi series=$name input=$(basename "$in") ranks=$ranks run=$k tool=$tool exit=$status" \
    "seconds=$(echo "$end - $start" | bc) cpu_seconds=$(awk '{print $1 + $2}' "$dir/cpu")" \
    "load=$(cut -d' ' -f1 /proc/loadavg)" >>"$out"
  grep -E '^(RESULT|RANK)' "$dir/stats" >>"$out"
  if [ "$tool" != extshuffle ]; then
    cmp -s "$dir/out-extshuffle" "$output" && echo "# same bytes as extshuffle" >>"$out" ||
      echo "# DIFFERENT from extshuffle" >>"$out"
  fi
}

# scaling SERIES INPUT RANKS_LIST ARGS...: in each repeat, the extshuffle
# reference, then each P.
scaling() {
  local name=$1 in=$2 ranks_list=$3
  shift 3
  for k in $(seq "$scaling_repeats"); do
    run "$name" 1 "$k" extshuffle "$in" "$@"
    for p in $ranks_list; do run "$name" "$p" "$k" extshuffle-mpi "$in" "$@"; done
  done
}

for s in $series; do
  case "$s" in
    p1)
      in=$(input fixed1g 1G)
      for k in $(seq "$repeats"); do
        run p1 1 "$k" extshuffle "$in" --record-size 8 -S 256M
        run p1 1 "$k" extshuffle-mpi "$in" --record-size 8 -S 256M
      done
      ;;
    strong) scaling strong "$(input fixed1g 1G)" "1 2 3 4" --record-size 8 -S 256M -j 1 ;;
    weak)
      for p in 1 2 3 4; do
        in=$(input "weak$p" "$((256 * p))M")
        for k in $(seq "$scaling_repeats"); do
          run weak 1 "$k" extshuffle "$in" --record-size 8 -S 128M -j 1
          run weak "$p" "$k" extshuffle-mpi "$in" --record-size 8 -S 128M -j 1
        done
      done
      ;;
    text) scaling text "$(input short_lines512m 512M 10 50)" "1 2 3 4" -S 256M -j 1 ;;
    *) echo "mpi_scaling.sh: unknown series '$s'" >&2; exit 2 ;;
  esac
done
echo "mpi_scaling.sh: results in $out" >&2
