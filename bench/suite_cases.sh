# Sourced by bench/suite.sh: the cases that need more than run_case (their
# own inputs, several budgets or several command shapes per run). They use
# suite.sh's make_input, measure, record, run_tool and check_permutation.

# --- case dataset64: a dataset of 64 files (docs/benchmarks.md, "Datasets") ---
# The single-file run of text lines against the same records written as 64
# shards (--shards 64: cut while the last level writes) and read from 64
# files (the input cut by `split -n l/64` into a directory), the three
# alternating in every repeat, same seed, same budget. Each output's records
# are checked against the input's (the shards concatenated in name order).
# Tools: extshuffle, extshuffle_shards64, extshuffle_inputs64. DATASET64_MIB
# sets the full-suite size in MiB (default 1024; --quick divides it by 16).
run_dataset64() {
  local c=$1 bytes=$2 r parts="$DIR/dataset64.parts" shards="$DIR/dataset64.shards" budget perm
  budget=$(to_bytes "$MEMORY")
  make_input lines 0 "$bytes"
  rm -rf "$parts" && mkdir -p "$parts" && split -n l/64 -d -a 2 "$in_file" "$parts/part-"
  for ((r = 1; r <= REPEATS; r++)); do
    run_tool "$c" extshuffle lines 0 "$bytes" "$MEMORY" "$r"
    rm -rf "$shards" && mkdir -p "$shards"
    measure "$extshuffle" "$in_file" -o "$shards/out-{shard}-of-{shards}.txt" --shards 64 --seed "$r" \
      -S "$MEMORY" -T "$DIR" -j "$(nproc)" --stats
    cat "$shards"/* > "$out_file"
    perm=$(check_permutation lines 0 "$out_file")
    rm -rf "$shards" "$out_file"
    record "$c" extshuffle_shards64 lines 0 "$bytes" "$MEMORY" "$budget" "$(nproc)" "$r" "$perm"
    measure "$extshuffle" "$parts" -o "$out_file" --seed "$r" -S "$MEMORY" -T "$DIR" -j "$(nproc)" --stats
    perm=$(check_permutation lines 0 "$out_file")
    rm -f "$out_file"
    record "$c" extshuffle_inputs64 lines 0 "$bytes" "$MEMORY" "$budget" "$(nproc)" "$r" "$perm"
  done
  rm -rf "$parts"
}
# --- end of case dataset64 ---

# --- case jsonl_heavy: the two-pass goals (docs/benchmarks.md, "Two passes") ---
# A JSONL file of lognormal record sizes (bench/generate_jsonl.cpp), shuffled
# at three budgets: -S 256M (larger than memory: two passes) beside the durable
# two-pass floor and terashuf with the same memory, -S 16M (near the minimum:
# leaves in windows), and the default budget (the whole file in RAM) beside
# the durable one-pass floor and shuf. The peers are not synced (the harder
# comparison for extshuffle, which fsyncs its output). extshuffle's --stats give the bytes it read and
# wrote, so the report states the passes it made, not only its time.
run_jsonl_heavy() {
  local c=$1 bytes=$2
  make_input jsonl 0 "$bytes"
  run_case "$c" jsonl 0 "$bytes" 256M cat_two_pass_sync terashuf extshuffle
  run_case "$c" jsonl 0 "$bytes" 16M extshuffle
  run_case "$c" jsonl 0 "$bytes" default cat_one_pass_sync shuf extshuffle
}
# --- end of case jsonl_heavy ---

# --- case tar_wds: WebDataset tar shards (docs/benchmarks.md, "Tar samples") ---
# A tar archive of samples of 100 KB-1 MB (bench/generate_tar.py: a .jpg,
# a .json and a .cls member each), 2 GiB, shuffled by sample at -S 256M
# (larger than memory: two passes) beside the durable two-pass floor (cat x2;
# sync). Each output's samples are checked against the input's by their
# digest (the same script: every sample whole, each once). Tools: extshuffle,
# cat_two_pass_sync. TAR_WDS_MIB sets the full-suite size in MiB (default
# 2048; --quick divides it by 16).
run_tar_wds() {
  local c=$1 bytes=$2 r perm budget t0 t1
  budget=$(to_bytes 256M)
  rm -f "$DIR"/in.*
  in_file="$DIR/in.tar"
  t0=$(date +%s%N)
  /usr/bin/python3 bench/generate_tar.py "$in_file" "$bytes" 1 || { echo "suite.sh: generate_tar.py failed" >&2; exit 1; }
  in_digest=$(/usr/bin/python3 bench/generate_tar.py --digest "$in_file")
  t1=$(date +%s%N)
  echo "# input tar bytes=$(stat -c %s "$in_file") generated and digested in $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", (b - a) / 1e9 }') s: $in_digest" | tee -a "$OUT"
  for ((r = 1; r <= REPEATS; r++)); do
    if [ -z "${TOOLS:-}" ] || [[ " $TOOLS " == *" cat_two_pass_sync "* ]]; then
      rm -f "$out_file" "$tmp_file"
      measure bash -c 'cat "$1" > "$2" && cat "$2" > "$3" && sync' _ "$in_file" "$tmp_file" "$out_file"
      rm -f "$out_file" "$tmp_file"
      record "$c" cat_two_pass_sync tar 0 "$bytes" 256M "$budget" "$(nproc)" "$r" unchecked
    fi
    if [ -z "${TOOLS:-}" ] || [[ " $TOOLS " == *" extshuffle "* ]]; then
      rm -f "$out_file"
      measure "$extshuffle" "$in_file" -o "$out_file" --format tar --seed "$r" -S 256M -T "$DIR" -j "$(nproc)" --stats
      perm=unchecked
      if [ "$m_status" = ok ]; then
        [ "$(/usr/bin/python3 bench/generate_tar.py --digest "$out_file")" = "$in_digest" ] && perm=yes || perm=no
      fi
      rm -f "$out_file"
      record "$c" extshuffle tar 0 "$bytes" 256M "$budget" "$(nproc)" "$r" "$perm"
    fi
  done
}
# --- end of case tar_wds ---
# --- cases in_ram_fixed8, in_ram_fixed32 and in_ram_npy512: in RAM as fast as the disks ---
# (docs/benchmarks.md, "In RAM: held once, overlapped"). A fixed-size input
# that fits is held once at every budget from its size up, and its run in RAM
# is never slower than the same input streamed at one eighth of its size.
# in_ram_fixed8: 8-byte records in RAM (default budget) against the durable
# one-pass floor and STXXL in RAM, at -S 256M against the durable two-pass
# floor, and at -S one eighth of the input. in_ram_npy512: a .npy of 512-byte
# rows at budgets of 1.17x and 2.15x the input (600M and 1100M for 512 MiB),
# the default and one eighth of the input, against the durable one-pass
# floor; peak RSS beside each.
eighth() { echo "$(( $1 / 8 / 1048576 ))M"; }
run_in_ram_fixed8() {
  local c=$1 bytes=$2
  make_input fixed 8 "$bytes"
  run_case "$c" fixed 8 "$bytes" default cat_one_pass_sync extshuffle stxxl
  run_case "$c" fixed 8 "$bytes" 256M cat_two_pass_sync extshuffle
  run_case "$c" fixed 8 "$bytes" "$(eighth "$bytes")" extshuffle
}
# in_ram_fixed32: 32-byte records, whose chunks are shuffled by index (the
# gather through a permutation, docs/benchmarks.md "Prefetched gathers"), in
# RAM and at -S 256M against the durable one- and two-pass floors.
run_in_ram_fixed32() {
  local c=$1 bytes=$2
  make_input fixed 32 "$bytes"
  run_case "$c" fixed 32 "$bytes" default cat_one_pass_sync extshuffle
  run_case "$c" fixed 32 "$bytes" 256M cat_two_pass_sync extshuffle
}
run_in_ram_npy512() {
  local c=$1 bytes=$2
  make_input npy 512 "$bytes"
  run_case "$c" npy 512 "$bytes" default cat_one_pass_sync extshuffle
  run_case "$c" npy 512 "$bytes" "$(( bytes * 117 / 100 / 1048576 ))M" extshuffle
  run_case "$c" npy 512 "$bytes" "$(( bytes * 215 / 100 / 1048576 ))M" extshuffle
  run_case "$c" npy 512 "$bytes" "$(eighth "$bytes")" extshuffle
}
# --- end of cases in_ram_fixed8, in_ram_fixed32 and in_ram_npy512 ---
