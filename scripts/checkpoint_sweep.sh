#!/usr/bin/env bash
# The full kill-and-resume sweep of --checkpoint (docs/reliability.md,
# "Killed and resumed"): the CheckpointKill tests (tests/reliability/
# checkpoint_kill_test.cpp and checkpoint_count_test.cpp, in the
# reliability room's executable) with
# MOMENTS moments (default 20) of every kind for each case (fixed-size
# records and heavy-tailed JSONL at two and three plan levels, a sharded and
# split tar dataset with a manifest, kill -9 while a write is held), where
# CI takes a few. Prints the table of moments (case | injection | exit |
# what the rerun did), then a count by outcome; exits non-zero when any
# resumed run's files differ from the uninterrupted run's or DIR is left
# holding files. Needs a build (scripts/build.sh) and strace.
#   scripts/checkpoint_sweep.sh [MOMENTS] > sweep.txt
set -euo pipefail
cd "$(dirname "$0")/.."
moments="${1:-20}"
binary=build/tests/reliability/reliability_tests  # the reliability room's tests, CheckpointKill among them
[[ -x "$binary" ]] || { echo "checkpoint_sweep.sh: $binary: not built (run scripts/build.sh)" >&2; exit 2; }
table="$(mktemp)"
trap 'rm -f "$table"' EXIT
status=0
EXTSHUFFLE_CHECKPOINT_MOMENTS="$moments" "$binary" --gtest_filter='CheckpointKill.*' >"$table" 2>&1 || status=$?
grep '^checkpoint moment |' "$table" | sed 's/^checkpoint moment | //'
total=$(grep -c '^checkpoint moment |' "$table" || true)
through=$(grep -c '| ran through$' "$table" || true)
over=$(grep -c '| started over$' "$table" || true)
echo "moments: $total"
echo "ran through (the moment never came, or the run went past a failure): $through"
echo "started over (stopped before its first synced point): $over"
echo "resumed from a synced point: $((total - through - over))"
grep -E '^\[  (PASSED|FAILED) ' "$table" || true
if [[ $status -ne 0 ]]; then
  grep -B2 -A8 'Failure' "$table" | head -60 >&2 || true
fi
exit "$status"
