#!/usr/bin/env bash
# External-memory benchmark: extshuffle on fixed-size records larger than the
# memory budget, next to the two-pass IO floor (cat in > tmp; cat tmp > out) and
# the one-pass floor (cat in > out) on the same file, in the same run. Checks
# that the output is a permutation of the input with an order-independent
# digest. Prints one "BENCH ..." line per measurement.
#
# usage: bench/external_bench.sh [GiB] [MEMORY] [RECORD_SIZE] [REPEATS] [DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
gib=${1:-8}
memory=${2:-512M}
record_size=${3:-8}
repeats=${4:-1}
dir=${5:-${TMPDIR:-/tmp}/extshuffle-bench}
bin=build/extshuffle
digest=build/bench/record_digest
mkdir -p "$dir"
trap 'rm -f "$dir/in.bin" "$dir/out.bin" "$dir/tmp.bin"' EXIT

bytes=$((gib * 1024 * 1024 * 1024))
records=$((bytes / record_size))
# Input: random bytes (the shuffle does not look at record contents).
head -c "$bytes" /dev/urandom > "$dir/in.bin"
in_digest=$($digest "$dir/in.bin" "$record_size")

seconds() { local t0 t1; t0=$(date +%s%N); "$@"; t1=$(date +%s%N); awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }'; }
drop_caches() { sync; echo 3 > /proc/sys/vm/drop_caches 2>/dev/null || true; }

for ((r = 1; r <= repeats; r++)); do
  drop_caches
  s=$(seconds bash -c "cat '$dir/in.bin' > '$dir/tmp.bin'; cat '$dir/tmp.bin' > '$dir/out.bin'")
  echo "BENCH external tool=cat_two_pass gib=$gib record_size=$record_size memory=$memory run=$r seconds=$s"
  rm -f "$dir/tmp.bin" "$dir/out.bin"
  drop_caches
  s=$(seconds bash -c "cat '$dir/in.bin' > '$dir/out.bin'")
  echo "BENCH external tool=cat_one_pass gib=$gib record_size=$record_size memory=$memory run=$r seconds=$s"
  rm -f "$dir/out.bin"
  drop_caches
  result=$($bin "$dir/in.bin" "$dir/out.bin" --record-size "$record_size" --seed "$r" -S "$memory" -T "$dir" --stats 2>&1 >/dev/null | grep '^RESULT')
  out_digest=$($digest "$dir/out.bin" "$record_size")
  [ "$out_digest" = "$in_digest" ] && ok=yes || ok=no
  echo "BENCH external tool=extshuffle gib=$gib record_size=$record_size memory=$memory run=$r permutation=$ok ${result#RESULT }"
  rm -f "$dir/out.bin"
done
