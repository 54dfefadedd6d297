#!/usr/bin/env bash
# Runs the bundle's tests (GoogleTest, no ctest needed) from any directory,
# one test file at a time, and reports each one's pass or failure; exit 1 if
# any failed. tests.manifest names each file with its labels and the room's
# executable that holds its tests (tests/CMakeLists.txt); a file's tests are
# run as EXTSHUFFLE_TEST_FILES=<file> <executable> (tests/support/test_main.cpp),
# within GTEST_FILTER when it is set. A test that needs what the bundle does
# not carry (python3, numpy, zstd, tar, ...) skips itself, saying why.
# The CLI tests find bin/extshuffle, lib/'s fault shim and share/extshuffle
# relative to themselves (tests/support/command.hpp) unless EXTSHUFFLE_BINARY,
# EXTSHUFFLE_FAULT_SHIM or EXTSHUFFLE_SOURCE_DIR say otherwise. Each runs in a
# fresh empty working directory; its output goes to LOG_DIR/<name>.log.
# usage: tests/run_tests.sh [--label L]... [--file F]... [--exclude-label L]...
#          [--jobs N] [--timeout SECONDS] [--log-dir DIR] [--wrap "COMMAND ..."]
#          [--list]
#   --label L          only the files carrying label L (any of those given)
#   --file F           only test file F (with --label: those files too); a
#                      name the manifest lacks is an error
#   --exclude-label L  none carrying label L
#   --wrap CMD         run each as CMD <executable> (e.g. a compute-sanitizer tool)
#   --list             print the selected files and labels, run nothing
# Labels: core device driver cli formats io lab reliability soak statistical gpu.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bundle=$(dirname "$here")
labels=()
files=()
excluded=()
jobs=1
timeout_s=1800
log_dir=""
wrap=""
list=0
while [ $# -gt 0 ]; do
  case "$1" in
    --label) labels+=("$2"); shift ;;
    --file) files+=("$2"); shift ;;
    --exclude-label) excluded+=("$2"); shift ;;
    --jobs|-j) jobs="$2"; shift ;;
    --timeout) timeout_s="$2"; shift ;;
    --log-dir) log_dir="$2"; shift ;;
    --wrap) wrap="$2"; shift ;;
    --list) list=1 ;;
    *) sed -n '2,/^set -euo/p' "$0" | sed '$d' >&2; exit 2 ;;
  esac
  shift
done

# The bundle needs at least the glibc it was built against.
required=$(sed -n 's/^glibc //p' "$bundle/REQUIREMENTS" 2>/dev/null || true)
have=$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{print $2}')
if [ -n "$required" ] && [ -n "$have" ] &&
   [ "$(printf '%s\n%s\n' "$required" "$have" | sort -V | head -n 1)" != "$required" ]; then
  echo "run_tests.sh: this system has glibc $have; the bundle needs glibc >= $required" >&2
  exit 1
fi

has_label() {  # has_label "a,b,c" x
  [[ ",$1," == *",$2,"* ]]
}
selected=()
declare -A executable_of=()
while IFS=$'\t' read -r name test_labels executable; do
  executable_of["$name"]="$executable"
  keep=1
  if [ $((${#labels[@]} + ${#files[@]})) -gt 0 ]; then
    keep=0
    for l in "${labels[@]}"; do has_label "$test_labels" "$l" && keep=1; done
    for f in "${files[@]}"; do [ "$f" = "$name" ] && keep=1; done
  fi
  for l in "${excluded[@]}"; do has_label "$test_labels" "$l" && keep=0; done
  [ "$keep" = 1 ] || continue
  if [ "$list" = 1 ]; then printf '%s\t%s\n' "$name" "$test_labels"; else selected+=("$name"); fi
done < "$here/tests.manifest"
for f in "${files[@]}"; do
  [ -n "${executable_of[$f]:-}" ] || { echo "run_tests.sh: no test file $f in tests.manifest" >&2; exit 2; }
done
[ "$list" = 1 ] && exit 0
[ ${#selected[@]} -gt 0 ] || { echo "run_tests.sh: no test carries the labels asked for" >&2; exit 2; }

[ -n "$log_dir" ] || log_dir=$(mktemp -d "${TMPDIR:-/tmp}/extshuffle-tests-XXXXXX")
mkdir -p "$log_dir"
log_dir=$(cd "$log_dir" && pwd)
results="$log_dir/results.tsv"
: > "$results"

run_one() {
  local name="$1"
  local cwd
  cwd=$(mktemp -d "${TMPDIR:-/tmp}/extshuffle-test-cwd-XXXXXX")
  local start=$SECONDS
  local rc=0
  # shellcheck disable=SC2086 # $wrap is a command line of its own
  (cd "$cwd" && EXTSHUFFLE_TEST_FILES="$name" exec timeout "$timeout_s" $wrap "$here/${executable_of[$name]}") \
    >"$log_dir/$name.log" 2>&1 || rc=$?
  rm -rf "$cwd"
  local skipped
  skipped=$(grep -c '^\[  SKIPPED \] .* ([0-9]* ms)$' "$log_dir/$name.log" || true)
  local verdict=PASS
  [ "$rc" = 0 ] || verdict=FAIL
  printf '%s\t%s\t%s\t%s\n' "$verdict" "$name" "$((SECONDS - start))" "$skipped" >> "$results"
  printf '%s %s (%d s%s)\n' "$verdict" "$name" "$((SECONDS - start))" \
    "$([ "$skipped" -gt 0 ] && echo ", $skipped skipped")"
  if [ "$verdict" = FAIL ]; then
    echo "---- last lines of $log_dir/$name.log (exit $rc):"
    tail -n 30 "$log_dir/$name.log"
    echo "----"
  fi
}

running=0
for name in "${selected[@]}"; do
  run_one "$name" &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then
    wait -n || true
    running=$((running - 1))
  fi
done
wait || true

passed=$(grep -c '^PASS' "$results" || true)
failed=$(grep -c '^FAIL' "$results" || true)
skipped=$(awk -F'\t' '{n += $4} END {print n + 0}' "$results")
echo "run_tests.sh: $passed passed, $failed failed of ${#selected[@]} test files; $skipped tests skipped (logs: $log_dir)"
[ "$failed" = 0 ]
