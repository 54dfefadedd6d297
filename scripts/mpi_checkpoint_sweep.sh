#!/usr/bin/env bash
# The wide kill-and-resume sweep of extshuffle-mpi --checkpoint
# (docs/reliability.md, "Killed and resumed"): the random moments of
# tests/mpi/mpi_checkpoint_test.cpp (MpiCheckpointMoments), MOMENTS moments
# (default 20) for each case: fixed-size records and heavy-tailed JSONL at
# two and three plan levels, a sharded and split tar dataset, each under
# real mpirun on 3 ranks over TCP, killed while the fault shim holds a
# rank's write into its scratch (pass 1) or its range (pass 2), where CI
# takes one moment a case. SEED (default: a fresh one) draws the moments.
# Prints one line a moment (and, for a killed job, a line of how its rerun
# went on: from which point, or from the start), then the test's verdict; exits non-zero when
# any resumed job's outputs differ from extshuffle's or DIR is left holding
# files. Needs a build (scripts/build.sh).
#   scripts/mpi_checkpoint_sweep.sh [MOMENTS [SEED]] > sweep.txt
set -euo pipefail
cd "$(dirname "$0")/.."
moments="${1:-20}"
seed="${2:-}"
binary=build/tests/mpi/mpi_tests
[[ -x "$binary" ]] || { echo "mpi_checkpoint_sweep.sh: $binary: not built (run scripts/build.sh)" >&2; exit 2; }
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
status=0
EXTSHUFFLE_CHECKPOINT_MOMENTS="$moments" EXTSHUFFLE_CHECKPOINT_SEED="$seed" \
  "$binary" --gtest_filter='MpiCheckpointMoments.*' >"$log" 2>&1 || status=$?
grep '^checkpoint \(moments\?\|resumed\)[ :|]' "$log" | sed 's/^checkpoint moment | //; s/^checkpoint resumed | /  /'
echo "moments: $(grep -c '^checkpoint moment |' "$log" || true)"
grep -E '^\[  (PASSED|FAILED) |^\[       OK \]' "$log" || true
if [[ $status -ne 0 ]]; then
  grep -B2 -A8 'Failure' "$log" | head -60 >&2 || true
fi
exit "$status"
