#!/usr/bin/env bash
# What a reader of the output pays next: two builds shuffle the same input
# in RAM (caches dropped first, output fsynced as always), then `cat` reads
# the output at once, without dropping the cache, as a training job started
# right after would. A build writing its output unbuffered (O_DIRECT) leaves
# none of it in the page cache; a buffered one leaves what the kernel kept.
# Builds alternate run by run. Prints one "READBACK ..." line per step.
#
# usage: bench/output_read_back.sh BUILD_A BUILD_B INPUT RECORD_SIZE [ROUNDS] [DIR]
#   (run as root to drop the page cache; DIR holds the output, default the input's)
set -euo pipefail
[ $# -ge 4 ] || { echo "usage: $0 BUILD_A BUILD_B INPUT RECORD_SIZE [ROUNDS] [DIR]" >&2; exit 2; }
builds=("$1" "$2")
input=$3 record_size=$4 rounds=${5:-2}
dir=${6:-$(dirname "$input")}
out="$dir/read_back_out.bin"
trap 'rm -f "$out" "$dir/read_back_time.txt"' EXIT
drop_caches() { sync; echo 3 > /proc/sys/vm/drop_caches 2>/dev/null || true; }
timed() {  # label build step command...
  local label=$1 build=$2 step=$3
  shift 3
  /usr/bin/time -f "%e %U %S" -o "$dir/read_back_time.txt" "$@"
  read -r wall user sys < "$dir/read_back_time.txt"
  echo "READBACK build=$label path=$build step=$step wall_s=$wall user_s=$user sys_s=$sys"
}
for ((round = 1; round <= rounds; round++)); do
  for k in 0 1; do
    label=$([ "$k" = 0 ] && echo a || echo b)
    rm -f "$out"
    drop_caches
    timed "$label" "${builds[$k]}" shuffle "${builds[$k]}/extshuffle" --record-size "$record_size" --seed "$round" \
      -T "$dir" "$input" "$out"
    timed "$label" "${builds[$k]}" read_back bash -c 'cat "$1" > /dev/null' _ "$out"
  done
done
