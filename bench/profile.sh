#!/usr/bin/env bash
# Where extshuffle's CPU time goes, by thread and by function: perf samples
# one run (page cache dropped first) and prints each thread's share of the
# samples and the top functions. Threads are named by their busiest
# function: the main thread, OpenMP workers (libgomp), STXXL's IO threads
# (kernel copies). Prints "PROFILE ..." lines; perf comes with
# scripts/install-deps.sh --bench.
#
# usage: bench/profile.sh CASE [GiB] [MEMORY]
#   CASE: text (lines of 20-200 bytes) or fixed8 (8-byte records)
#   e.g.  bench/profile.sh text 4 512M   (the suite's text_4g case)
set -euo pipefail
cd "$(dirname "$0")/.."
case_name=${1:?usage: bench/profile.sh text|fixed8 [GiB] [MEMORY]}
gib=${2:-4}
memory=${3:-512M}
BUILD_DIR=${BUILD_DIR:-build}
dir=${DIR:-${TMPDIR:-/tmp}/extshuffle-profile}
command -v perf >/dev/null || { echo "profile.sh: perf is missing: scripts/install-deps.sh --bench" >&2; exit 1; }
mkdir -p "$dir"
trap 'rm -f "$dir/in.data" "$dir/out.data" "$dir/perf.data"' EXIT

bytes=$((gib * 1024 * 1024 * 1024))
args=()
case $case_name in
  text) "$BUILD_DIR/bench/generate_lines" "$dir/in.data" "$bytes" 1 2>/dev/null ;;
  fixed8) "$BUILD_DIR/bench/generate_lines" "$dir/in.data" "$bytes" 1 --binary 2>/dev/null; args=(--record-size 8) ;;
  *) echo "profile.sh: unknown case $case_name (text, fixed8)" >&2; exit 2 ;;
esac
sync; echo 3 > /proc/sys/vm/drop_caches 2>/dev/null || true
perf record -q -F 999 -o "$dir/perf.data" -- \
  "$BUILD_DIR/extshuffle" "$dir/in.data" "$dir/out.data" "${args[@]}" -S "$memory" -T "$dir" --seed 1 --stats \
  2> "$dir/stderr.txt"
grep RESULT "$dir/stderr.txt" | sed "s/^RESULT/PROFILE case=$case_name gib=$gib memory=$memory result/"

# Samples per thread and per (thread, function), as percentages of all samples.
perf report -i "$dir/perf.data" --no-children --sort pid,sym -g none --percent-limit 0.5 2>/dev/null |
  awk -v c="$case_name" '
    /^#/ || NF < 4 { next }
    {
      share = $1; sub("%", "", share); share += 0; tid = $2; sub(":.*", "", tid)
      sym = ""; for (i = 4; i <= NF; i++) sym = sym (i > 4 ? " " : "") $i
      gsub(/\(anonymous namespace\)::/, "", sym); sub(/\(.*$/, "", sym)
      total[tid] += share
      if (!(tid in top) || share > topshare[tid]) { top[tid] = sym; topshare[tid] = share }
      printf "PROFILE case=%s thread=%s share=%.1f%% function=%s\n", c, tid, share, sym
    }
    END {
      for (t in total) printf "PROFILE case=%s thread=%s thread_total=%.1f%% busiest=%s\n", c, t, total[t], top[t]
    }'
