#!/usr/bin/env bash
# What --checkpoint costs extshuffle-mpi (docs/benchmarks.md, "--checkpoint",
# "Under MPI, 3 ranks over TCP"): one heavy-tailed JSONL input
# (bench/generate_jsonl), the job on RANKS ranks of this machine talking
# over TCP only (`--mca btl tcp,self`, as ranks on separate machines),
# without and with --checkpoint DIR (each rank keeps its own DIR/rank-R),
# uninterrupted, alternated round by round and cold (the page cache
# dropped before each run, as root; else the line says cold=no). Prints one "MPICKPT ..." line
# per run: wall seconds around mpirun, the CPU seconds of its process tree
# (GNU time), and whether the output is the first run's bytes.
#
# With RECORD_SIZE set (e.g. 16), the input is SIZE random bytes read as
# records of that many bytes (--record-size) in place of JSONL: many more
# records a byte, so that a few GiB make a root of many chunks, scattered
# and exchanged in rounds (JSONL's 2-4 GiB are a root of few chunks, which
# the ranks share in memory: docs/mpi.md).
#
# With KILL_AT set (a fraction, e.g. 0.3), each round also runs the
# checkpointed job killed (SIGKILL to its whole mpirun session) at that
# fraction of the round's plain wall time, then reruns it to the end: the
# "killed" and "resumed" lines, the latter with rank 0's -v line of where
# the job went on (a benchmark may kill by the clock; the tests kill on
# events).
#
# With CACHE_LIMIT set (e.g. 1G; root, cgroup v1's memory controller), the
# whole job (mpirun and its ranks) is held to that much memory, page cache
# included, as in bench/checkpoint_cost.sh.
#
# usage: bench/mpi_checkpoint_cost.sh BUILD_DIR SIZE [ROUNDS] [RANKS] [DIR] [MEMORY]
#   SIZE of the input (generate_jsonl's syntax: 2G), ROUNDS (default 3),
#   RANKS (default 3), DIR for the input, output and checkpoint (default
#   /tmp), MEMORY (-S per rank, default 64M)
set -euo pipefail
[ $# -ge 2 ] || { sed -n '2,/^set -euo/p' "$0" | sed '$d' >&2; exit 2; }
build=$1 size=$2 rounds=${3:-3} ranks=${4:-3} dir=${5:-/tmp}/mpi_checkpoint_cost memory=${6:-64M}
mkdir -p "$dir/scratch"
trap 'rm -rf "$dir"' EXIT
in=$dir/in.jsonl out=$dir/out.jsonl ck=$dir/ck
format=()
if [ -n "${RECORD_SIZE:-}" ]; then
  in=$dir/in.bin out=$dir/out.bin
  head -c "$(numfmt --from=iec "$size")" /dev/urandom >"$in"
  format=(--record-size "$RECORD_SIZE")
else
  "$build/bench/generate_jsonl" "$in" "$size" 1 >/dev/null
fi
[ "$(id -u)" -eq 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
held=()
if [ -n "${CACHE_LIMIT:-}" ]; then
  group=/sys/fs/cgroup/memory/extshuffle-mpi-checkpoint-cost-$$
  mkdir "$group"
  trap 'rm -rf "$dir"; rmdir "$group" 2>/dev/null || true' EXIT
  numfmt --from=iec "$CACHE_LIMIT" >"$group/memory.limit_in_bytes"
  held=(sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$group")
fi
echo "MPICKPT input=$size record_size=${RECORD_SIZE:-jsonl} ranks=$ranks memory=$memory rounds=$rounds cache_limit=${CACHE_LIMIT:-none}" \
  "uptime=\"$(uptime)\" commit=$(git rev-parse --short HEAD 2>/dev/null || echo -)"
reference="" plain_wall=0
run() {  # LABEL [OPTIONS...]: one cold job
  local label=$1 cold=yes
  shift
  rm -rf "$out" "$ck"
  sync
  echo 3 >/proc/sys/vm/drop_caches 2>/dev/null || cold=no
  local t0 t1
  t0=$(date +%s.%N)
  "${held[@]}" /usr/bin/time -f "%U %S" -o "$dir/cpu" mpirun -q --oversubscribe --bind-to none --mca btl tcp,self \
    -np "$ranks" "$build/extshuffle-mpi" "$in" "$out" "${format[@]}" --seed 1 -S "$memory" -T "$dir/scratch" -q "$@"
  t1=$(date +%s.%N)
  local digest
  digest=$(sha1sum <"$out" | cut -c1-12)
  [ -n "$reference" ] || reference=$digest
  local wall
  wall=$(echo "$t1 - $t0" | bc)
  [ "$label" != plain ] || plain_wall=$wall
  echo "MPICKPT round=$round run=$label wall_s=$wall cpu_s=$(awk '{print $1 + $2}' "$dir/cpu")" \
    "sha1=$digest same=$([ "$digest" = "$reference" ] && echo yes || echo NO) cold=$cold"
}
job() {  # [OPTIONS...]: the job, held to CACHE_LIMIT when set
  "${held[@]}" mpirun -q --oversubscribe --bind-to none --mca btl tcp,self -np "$ranks" "$build/extshuffle-mpi" \
    "$in" "$out" "${format[@]}" --seed 1 -S "$memory" -T "$dir/scratch" "$@"
}
cold_cache() { sync; echo 3 >/proc/sys/vm/drop_caches 2>/dev/null || true; }
killed_and_resumed() {  # the checkpointed job killed at KILL_AT x the plain wall, then rerun
  local at t0 t1 t2 digest from
  at=$(echo "$plain_wall * $KILL_AT" | bc)
  rm -rf "$out" "$ck"
  cold_cache
  t0=$(date +%s.%N)
  setsid bash -c "$(declare -f job); $(declare -p held build in out memory dir ranks format); job -q --checkpoint $ck" &
  local pid=$!
  sleep "$at"
  pkill -KILL -s "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  t1=$(date +%s.%N)
  cold_cache
  job -v --checkpoint "$ck" 2>"$dir/resumed.err"
  t2=$(date +%s.%N)
  digest=$(sha1sum <"$out" | cut -c1-12)
  from=$(grep -o 'checkpoint: dataset 1: [^,]*' "$dir/resumed.err" | head -1)
  echo "MPICKPT round=$round run=killed at_s=$at wall_s=$(echo "$t1 - $t0" | bc)"
  echo "MPICKPT round=$round run=resumed wall_s=$(echo "$t2 - $t1" | bc) sha1=$digest" \
    "same=$([ "$digest" = "$reference" ] && echo yes || echo NO) from=\"$from\""
}
for ((round = 1; round <= rounds; round++)); do
  if ((round % 2)); then
    run plain
    run ckpt --checkpoint "$ck"
  else
    run ckpt --checkpoint "$ck"
    run plain
  fi
  if [ -n "${KILL_AT:-}" ]; then killed_and_resumed; fi
done
