#!/usr/bin/env bash
# Runs the Release build's tests (build/, as scripts/test.sh's first stage
# leaves it) while stress-ng keeps every core busy with CPU-bound work of
# its own: the proof that no test waits on the clock for an ordering (they
# wait on events: the fault shim's pause, strace's injection, a pipe, /proc)
# and that none fails only for being slow. stress-ng runs at the tests'
# priority, one worker per core, for as long as ctest does.
# usage: scripts/busy_machine_test.sh [CTEST_ARGS...]   (e.g. -L reliability)
set -euo pipefail
cd "$(dirname "$0")/.."
command -v stress-ng >/dev/null || { echo "busy_machine_test.sh: stress-ng is missing (scripts/install-deps.sh installs it)" >&2; exit 1; }
[ -f build/CTestTestfile.cmake ] || { echo "busy_machine_test.sh: no build/: run scripts/build.sh first" >&2; exit 1; }
stress-ng --cpu "$(nproc)" --cpu-method all --quiet &
stress=$!
trap 'kill "$stress" 2>/dev/null; wait "$stress" 2>/dev/null || true' EXIT
costs=build/Testing/Temporary/CTestCostData.txt
if [ ! -f "$costs" ]; then
  mkdir -p "$(dirname "$costs")"
  cp scripts/ctest_costs.txt "$costs"
fi
start=$SECONDS
status=0
(cd build && ctest --output-on-failure -j "$((2 * $(nproc)))" --timeout 900 "$@") || status=$?
echo "busy_machine_test.sh: ctest exited $status after $((SECONDS - start)) s beside $(nproc) stress-ng workers" >&2
exit "$status"
