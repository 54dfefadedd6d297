#!/usr/bin/env bash
# O_DIRECT against buffered IO for scratch traffic: write a file in 8 MiB
# requests as the bucket writers do, then read it back as step 4 does,
# without dropping the cache in between (the executor does not either).
# Wall time shows what the pipeline waits for, CPU time (system) what the
# kernel's copies take from the two cores the shuffle needs.
# Prints one "DIRECT ..." line per measurement.
#
# usage: bench/direct_io.sh [GiB] [DIR]   (run as root to drop the page cache)
set -euo pipefail
gib=${1:-4}
dir=${2:-${TMPDIR:-/tmp}/extshuffle-direct}
mkdir -p "$dir"
file="$dir/scratch.bin"
trap 'rm -f "$file"' EXIT
drop_caches() { sync; echo 3 > /proc/sys/vm/drop_caches 2>/dev/null || true; }

measure() {  # mode step dd-arguments...
  local mode=$1 step=$2
  shift 2
  /usr/bin/time -f "%e %S" -o "$dir/time.txt" dd "$@" bs=8M status=none
  read -r wall sys < "$dir/time.txt"
  echo "DIRECT mode=$mode step=$step gib=$gib wall_s=$wall system_cpu_s=$sys"
}

for mode in buffered direct; do
  out_flag=() in_flag=()
  [[ $mode == direct ]] && out_flag=(oflag=direct) in_flag=(iflag=direct)
  drop_caches
  measure "$mode" write if=/dev/zero of="$file" count=$((gib * 128)) "${out_flag[@]}"
  measure "$mode" read if="$file" of=/dev/null "${in_flag[@]}"
  t0=$(date +%s%N)
  sync
  echo "DIRECT mode=$mode step=writeback_after gib=$gib wall_s=$(awk -v a="$t0" -v b="$(date +%s%N)" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')"
  rm -f "$file"
done
