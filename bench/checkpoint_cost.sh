#!/usr/bin/env bash
# What --checkpoint costs (docs/benchmarks.md, "--checkpoint"): one build,
# one heavy-tailed JSONL input (bench/generate_jsonl), side by side in each
# round, in turn:
#   plain    a run without --checkpoint;
#   ckpt     the same run with --checkpoint DIR, uninterrupted;
#   killed   the same checkpointed run, sent SIGKILL at a moment drawn
#            uniformly in 10-90% of this round's plain run's time, then
#   resumed  the same command again, which resumes.
# The page cache is dropped before every run (as root; else the runs are
# warm and the line says so). Prints one "CKPT ..." line per run (wall
# seconds; --stats' bytes read and written; for the killed run, what it
# had read and written by /proc/PID/io when killed) and, for the resumed
# run, -v's note of where it resumed.
#
# With CACHE_LIMIT set (bytes, e.g. 512M; root, cgroup v1's memory
# controller), every run is held to that much memory, page cache included,
# in a memory cgroup of its own: the scratch space written by pass 1 no
# longer stays cached for pass 2, as for a user whose scratch exceeds RAM,
# so an uninterrupted run reads it from disk as a resumed one does (without
# it, a 1 GiB input's scratch is still in the page cache when the
# uninterrupted run reads it back, never when the resumed run does).
#
# usage: bench/checkpoint_cost.sh BUILD_DIR SIZE [ROUNDS] [DIR] [MEMORY]
#   SIZE of the input (generate_jsonl's syntax: 1G), ROUNDS (default 3),
#   DIR for the input, output and checkpoint (default /tmp), MEMORY (-S,
#   default 64M)
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 BUILD_DIR SIZE [ROUNDS] [DIR] [MEMORY]" >&2; exit 2; }
build=$1 size=$2 rounds=${3:-3} dir=${4:-/tmp}/checkpoint_cost memory=${5:-64M}
bin=$build/extshuffle
mkdir -p "$dir"
trap 'rm -rf "$dir"' EXIT
in=$dir/in.jsonl out=$dir/out.jsonl ck=$dir/ck
"$build/bench/generate_jsonl" "$in" "$size" 1 >/dev/null
cold=yes
drop_caches() { sync; echo 3 > /proc/sys/vm/drop_caches 2>/dev/null || cold=no; }
now() { date +%s.%N; }
# The command line, run in the memory cgroup when CACHE_LIMIT is set (the
# shell execs it: the same pid, which the killed run's /proc/PID/io reads).
held=()
if [ -n "${CACHE_LIMIT:-}" ]; then
  group=/sys/fs/cgroup/memory/extshuffle-checkpoint-cost-$$
  mkdir "$group"
  trap 'rm -rf "$dir"; rmdir "$group" 2>/dev/null || true' EXIT
  numfmt --from=iec "$CACHE_LIMIT" >"$group/memory.limit_in_bytes"
  held=(sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$group")
fi
stat_field() { sed -n "s/.* $1=\([0-9.]*\).*/\1/p" "$2" | head -1; }
echo "CKPT input=$size memory=$memory rounds=$rounds cache_limit=${CACHE_LIMIT:-none} uptime=\"$(uptime)\" commit=$(git rev-parse --short HEAD 2>/dev/null || echo -)"
# One complete run: label, extra options.
run() {
  local label=$1
  shift
  [ "$label" = resumed ] || rm -f "$out"  # a resumed run may find its output committed
  drop_caches
  local t0 t1
  t0=$(now)
  "${held[@]}" "$bin" "$in" "$out" --seed 1 -S "$memory" -T "$dir" --stats -v "$@" 2>"$dir/err.txt"
  t1=$(now)
  local note
  note=$(grep -o 'resumed from --checkpoint .*' "$dir/err.txt" | head -1 || true)
  local digest
  digest=$(sha1sum <"$out" | cut -c1-12)  # outside the time: every run's output is the same bytes
  echo "CKPT round=$round run=$label wall_s=$(echo "$t1 - $t0" | bc) bytes_read=$(stat_field bytes_read "$dir/err.txt")" \
    "bytes_written=$(stat_field bytes_written "$dir/err.txt") sha1=$digest cold=$cold${note:+ note=\"$note\"}"
  LAST_WALL=$(echo "$t1 - $t0" | bc)
}
for ((round = 1; round <= rounds; round++)); do
  # Alternate the order of the two uninterrupted runs round by round.
  if ((round % 2)); then
    run plain; plain_wall=$LAST_WALL; rm -rf "$ck"; run ckpt --checkpoint "$ck"
  else
    rm -rf "$ck"; run ckpt --checkpoint "$ck"; run plain; plain_wall=$LAST_WALL
  fi
  # Killed once at a drawn moment, then resumed.
  rm -rf "$ck" "$out"
  drop_caches
  fraction=$(awk -v s="$RANDOM" 'BEGIN { srand(s); printf "%.3f", 0.1 + 0.8 * rand() }')
  delay=$(echo "$plain_wall * $fraction" | bc -l)
  t0=$(now)
  "${held[@]}" "$bin" "$in" "$out" --seed 1 -S "$memory" -T "$dir" --checkpoint "$ck" -q &
  pid=$!
  sleep "$delay"
  io=$(cat /proc/$pid/io 2>/dev/null || true)
  kill -9 "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  t1=$(now)
  # No /proc/PID/io: the run had ended (committed) before the kill; the
  # "resumed" run then starts over (the round is no kill-and-resume pair).
  echo "CKPT round=$round run=killed at_fraction=$fraction wall_s=$(echo "$t1 - $t0" | bc)" \
    "bytes_read=$(echo "$io" | sed -n 's/^rchar: //p') bytes_written=$(echo "$io" | sed -n 's/^wchar: //p') cold=$cold" \
    "ended_before_kill=$([ -n "$io" ] && echo no || echo yes)"
  run resumed --checkpoint "$ck"
done
