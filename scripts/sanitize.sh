#!/usr/bin/env bash
# Builds extshuffle with AddressSanitizer and UndefinedBehaviorSanitizer
# (EXTSHUFFLE_SANITIZE=ON, CUDA off, -O1) into build-asan/ and runs the tests
# against it, except those labelled statistical or lab: they would double the
# stage's time and run the same code paths as the fast tests with more
# samples (timings in docs/reliability.md). Two kinds of tests:
#   - the library's own (core, io, formats, device, driver, ...) run from
#     build-asan/ against the instrumented library, as
#     scripts/sanitized_tests.sh selects them (the Release stage leaves out
#     those that run here, and the check below makes sure that every test
#     runs in one stage or both); those of the rooms whose
#     code lives mostly in headers (core, device) are compiled instrumented,
#     the others' rooms link the Release build's objects of their files
#     (tests/CMakeLists.txt, EXTSHUFFLE_TEST_OBJECTS_FROM: compiling them
#     again was most of this build's time);
#   - the black-box tests of the program (label "binary": CLI, reliability)
#     need no instrumented copy of themselves: the Release build's (build/,
#     built here if missing) run against the instrumented program
#     (EXTSHUFFLE_BINARY, EXTSHUFFLE_SANITIZED), so its reports count. Not
#     all of them: the test files of `sanitized_binary_files` below, at least
#     one for each area of the CLI (lines, CSV, JSONL, TFRecord, tar, npy,
#     fixed-size records, shards and the manifest, record indexes, the
#     checkpoint, errors, failing calls, the commit). The other black-box
#     files (two thirds of those tests' time here) run in the Release stage
#     only; the library code under them runs here in the rooms' own tests.
# Any report fails the stage: UBSan, ASan and LeakSanitizer abort on the
# first one, and every report is also written under
# build-asan/sanitizer-reports/, which must stay empty. Extra arguments go to
# both ctest runs (e.g. -E Fault; a -R replaces the subset's); --build-only,
# first, builds and runs nothing (scripts/test.sh builds while the Release
# tests run), --configure-only configures build-asan/ and build/ and builds
# nothing (scripts/test.sh reads which library tests run here before its
# Release tests: scripts/sanitized_tests.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
mode=all
case "${1:-}" in
  --build-only) mode=build; shift ;;
  --configure-only) mode=configure; shift ;;
esac
source scripts/generator.sh
source scripts/sanitized_tests.sh
build="build-asan"
reports="$PWD/$build/sanitizer-reports"
instrumented="$PWD/$build/extshuffle"

# -O1 -g1: half the compile time of -O2 -g (measured on the walk's largest file),
# with line numbers in the reports. extshuffle-mpi is left to the Release
# stage: Open MPI's components leak at exit from modules it has unloaded,
# which LeakSanitizer can neither name nor suppress, and its build and tests
# would add about four minutes to the stage CI can least afford
# (docs/reliability.md, "Sanitizers", says how its tests ran clean under
# ASan and UBSan with leak detection off). The Python package too: an
# instrumented module cannot load into Debian's uninstrumented python3
# without preloading the sanitizer runtimes; its tests run in the Release
# stage, and the library code it binds runs here in the C++ tests.
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
      -DEXTSHUFFLE_CUDA=OFF -DEXTSHUFFLE_MPI=OFF -DEXTSHUFFLE_PYTHON=OFF -DEXTSHUFFLE_SANITIZE=ON \
      -DEXTSHUFFLE_BUILD_BENCH=OFF -DEXTSHUFFLE_TEST_OBJECTS_FROM="$PWD/build" >/dev/null
if [ ! -f build/CMakeCache.txt ]; then
  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
[ "$mode" = configure ] && exit 0

# Each test file's labels and its room's executable (tests/CMakeLists.txt
# writes them to tests/test_files.tsv): build the rooms that hold a library
# test not excluded, and the Release rooms that hold a black-box one.
targets=(extshuffle)
binary_rooms=()
while IFS=$'\t' read -r _ labels target; do
  case ",$labels," in *",statistical,"* | *",lab,"* | *",mpi,"*) continue ;; esac
  if [[ ",$labels," == *",binary,"* ]]; then
    binary_rooms+=("$target")
  elif ! [[ ",$labels," =~ ,($sanitizer_excluded_labels), ]]; then
    targets+=("$target")
  fi
done < "$build/tests/test_files.tsv"
mapfile -t targets < <(printf '%s\n' "${targets[@]}" | sort -u)
mapfile -t binary_rooms < <(printf '%s\n' "${binary_rooms[@]}" | sort -u)
# The Release build first: its objects of the library's tests are linked here.
cmake --build build -j "$(nproc)" --target "${targets[@]}" "${binary_rooms[@]}" extshuffle_fault_shim
cmake --build "$build" -j "$(nproc)" --target "${targets[@]}"
[ "$mode" = build ] && exit 0

rm -rf "$reports"
mkdir -p "$reports"
export ASAN_OPTIONS="halt_on_error=1:abort_on_error=1:detect_leaks=1:log_path=$reports/asan"
export UBSAN_OPTIONS="halt_on_error=1:abort_on_error=1:print_stacktrace=1:log_path=$reports/ubsan"
export LSAN_OPTIONS="log_path=$reports/lsan"
status=0
# Longest tests first, as in scripts/test.sh: a fresh build-asan has no
# record of their durations, and the Release ones order them about the same.
if [ ! -f "$build/Testing/Temporary/CTestCostData.txt" ]; then
  mkdir -p "$build/Testing/Temporary"
  cp scripts/ctest_costs.txt "$build/Testing/Temporary/CTestCostData.txt"
fi
# Every test runs in one stage or both: the Release stage's selection
# (scripts/test.sh) and this one's together are the whole suite.
check_every_test_runs "$build"
# The black-box test files that run here (the rule: every area of the CLI at
# least once, through its cheapest file that reaches the area's code; each
# file whole, but the volume tests excluded below). A file listed here that
# the build does not list fails the stage, so a rename cannot quietly drop
# it.
sanitized_binary_files=(
  lines_cli_test           # lines: budgets, stdin, threads, -e and -i, NUL bytes
  csv_cli_test             # CSV: headers, quoting, multi-line fields
  dataset_outputs_cli_test # JSONL, npy and CSV shards, splits, --manifest, compressed outputs
  tfrecord_cli_test        # TFRecord
  tar_edges_cli_test       # tar: archives' edge cases
  npy_cli_test             # npy
  fixed_records_cli_test   # fixed-size records, --stats, stdio
  index_cli_test           # record indexes
  checkpoint_safety_test   # --checkpoint and resuming
  error_messages_test      # errors: one line, the right exit code
  parsing_traps_test       # errors: options and inputs that look alike
  fault_injection_test     # failing calls (ENOSPC, EIO, fsync): the error paths
  transaction_test         # the commit, bounded memory and scratch
)
# Their GoogleTest suites, from the listings the build writes (test file,
# test name): one regular expression for ctest's -R.
mapfile -t listings < <(find build/tests -name '*_tests_sources.txt')
suites=()
for file in "${sanitized_binary_files[@]}"; do
  mapfile -t of_file < <(awk -F'\t' -v f="$file" '$1 == f {sub(/\..*/, "", $2); print $2}' "${listings[@]}" | sort -u)
  if [ "${#of_file[@]}" -eq 0 ]; then
    echo "sanitize: no test of $file in build/tests/*_sources.txt (renamed? update sanitized_binary_files)" >&2
    exit 1
  fi
  suites+=("${of_file[@]}")
done
sanitized_binary="^($(IFS='|'; echo "${suites[*]}"))\."
# Of those, four tests spend their time on volume, not on paths of their
# own: fixed_records_cli_test's memory cap and huge-page count (both
# meaningless under ASan, whose quarantine and shadow fill memory), and -n on
# millions of records at several counts, of fixed-size records and of lines
# (the library's head-count tests run the same cut here). They run in the
# Release stage.
# Not to be listed above: checkpoint_kill_test fails write(2) by strace's
# injection, which the sanitizer runtime itself calls to probe memory (it then
# stops the program with "CHECK failed", not the run's own error).
slow_binary='FixedRecordsCli\.(PeakMemoryStaysWithinTheBudget|StatsSayWhetherHugePagesWereUsed)$'
slow_binary+='|(FixedRecordsCli|LinesCli)\.HeadCountIsThePrefixOfTheFullShuffle$'
# And two that repeat a path another listed test takes here (they too run
# in the Release stage): CSV's walk at one to three levels from a file and
# from standard input (15 s; the walk and the spooling:
# LinesCli.SameBytesAcrossBudgetsAndStdin; CSV's records counted and moved
# whole: CsvCli.QuotedRecordsMoveWholeAndTheHeaderStaysOnTop; the header:
# CsvCli.HeaderOption and HeadCountKeepsTheHeader) and lines on 1, 2 and 3
# threads (6 s; the threads: FixedRecordsCli's
# SameSeedSameBytesAcrossMemoryThreadsAndStdio here, and the library's
# VariableExecutor.SameBytesForOneAndTwoThreads).
slow_binary+='|CsvCli\.SameBytesAcrossBudgetsInTheOrderOfFixedSizeRecords$|LinesCli\.ThreadsDoNotChangeTheOutput$'
# Twice as many tests at once as cores, as scripts/test.sh.
jobs=$((2 * $(nproc)))
# The library's own tests, as scripts/sanitized_tests.sh selects them
# (executables left unbuilt show up as <target>_NOT_BUILT tests: not run),
# with the case loops of the thinned ones thinned ($EXTSHUFFLE_SANITIZED).
(cd "$build" && EXTSHUFFLE_SANITIZED=1 ctest --output-on-failure -j "$jobs" --timeout 900 \
   -LE "^($sanitizer_excluded_labels)\$" -E "_NOT_BUILT\$|$sanitizer_release_only" "$@") ||
  status=1
# ctest records the black-box tests' durations under the sanitizers in
# build/'s record, the one that orders the Release stage's next run and that
# scripts/ctest_costs.txt is refreshed from: it is put back afterwards.
release_costs=build/Testing/Temporary/CTestCostData.txt
[ -f "$release_costs" ] && cp "$release_costs" "$build/release-costs.txt"
(cd build && EXTSHUFFLE_BINARY="$instrumented" EXTSHUFFLE_SANITIZED=1 \
   ctest --output-on-failure -j "$jobs" --timeout 900 -L binary -LE 'statistical|lab|mpi' -R "$sanitized_binary" \
     -E "$slow_binary" "$@") ||
  status=1
[ -f "$build/release-costs.txt" ] && mv "$build/release-costs.txt" "$release_costs"
if [ -n "$(ls -A "$reports")" ]; then
  echo "sanitize: sanitizer reports:" >&2
  for f in "$reports"/*; do echo "== $f" >&2; head -n 60 "$f" >&2; done
  status=1
fi
[ "$status" -eq 0 ] && echo "sanitize: no sanitizer report" >&2
exit "$status"
