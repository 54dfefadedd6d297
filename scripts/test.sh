#!/usr/bin/env bash
# The whole test suite, as CI runs it (no standard input needed), in four
# stages:
#   1. the walls between the rooms (scripts/check_layers.py) and the layout
#      of the changed lines (scripts/check_format.sh), both in seconds; then
#      build/ (Release) and every ctest test but the library tests that the
#      next stage runs (scripts/sanitized_tests.sh; the gpu-labelled ones
#      skip themselves without a device); beside those tests, at the lowest
#      priority, the builds of the next three stages;
#   2. scripts/sanitize.sh: build-asan/ with ASan + UBSan, the library's
#      tests except the statistical and lab ones and a subset of the
#      black-box ones, no sanitizer report allowed; it checks that every
#      test ran in one stage or both;
#   3. scripts/fuzz.sh: each libFuzzer target of fuzz/ for FUZZ_SECONDS
#      (default 20) seconds, no crash allowed;
#   4. the relocatable bundle: scripts/bundle.sh packed stage 1's build (no
#      rebuild) and scripts/bundle_test.sh runs it from another directory
#      with the system's copies of its libraries hidden.
# Each stage's time is printed; see docs/reliability.md for typical figures.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh

stage() {
  local name="$1"
  shift
  local start=$SECONDS
  echo "== stage: $name" >&2
  "$@"
  echo "== stage: $name passed in $((SECONDS - start)) s" >&2
}

tests() {
  python3 scripts/check_layers.py
  bash scripts/check_format.sh
  bash scripts/build.sh
  # The library tests that stage 2 runs under the sanitizers are left out
  # here: each test runs once (those stage 2 thins run here whole). Read from
  # build-asan/'s configuration and build/'s listings, before build-asan/ is
  # built.
  bash scripts/sanitize.sh --configure-only
  source scripts/sanitized_tests.sh
  local sanitized
  sanitized=$(release_skipped_tests build-asan)
  # Longest tests first: ctest orders a parallel run by the durations it
  # recorded, and a fresh clone has none, so it would start the slowest (up
  # to 50 s) wherever they fall, some at the end. scripts/ctest_costs.txt is
  # such a record (refresh it by copying build/Testing/Temporary/
  # CTestCostData.txt up to its --- line after a full run); tests missing
  # from it run after those in it.
  local costs=build/Testing/Temporary/CTestCostData.txt
  if [ ! -f "$costs" ]; then
    mkdir -p "$(dirname "$costs")"
    cp scripts/ctest_costs.txt "$costs"
  fi
  # While the Release tests run, the next stages' builds (build-asan/,
  # build-fuzz/, the bundle's tarball, about 450 CPU seconds) take the CPU
  # time the tests leave idle, waiting on the processes they start, on fsync,
  # on mpirun or on each other's locks: at nice 19 they get a core only when
  # no test wants it (CFS weighs nice 19 at 15 against a test's 1024), so
  # the tests run as they would alone. Their log is build/prebuild.log.
  nice -n 19 bash -c 'set -e
    bash scripts/sanitize.sh --build-only
    bash scripts/fuzz.sh --build-only
    rm -f dist/extshuffle-*-linux-x86_64.tar.gz
    bash scripts/bundle.sh --no-build' >build/prebuild.log 2>&1 &
  local prebuild=$! tests_status=0 prebuild_status=0
  # Twice as many tests at once as cores: many wait on the processes they
  # start, on fsync or on each other's locks (the suite: 156 s at -j 2,
  # 132 s at -j 4 on 2 cores).
  (cd build && ctest --output-on-failure -j "$((2 * $(nproc)))" --timeout 900 ${sanitized:+-E "$sanitized"}) ||
    tests_status=$?
  wait "$prebuild" || prebuild_status=$?
  if [ "$prebuild_status" -ne 0 ]; then
    echo "test.sh: the next stages' builds failed; last lines of build/prebuild.log:" >&2
    tail -n 40 build/prebuild.log >&2
  fi
  [ "$tests_status" -eq 0 ] && [ "$prebuild_status" -eq 0 ]
}

stage "build and tests" tests
stage "sanitizers" bash scripts/sanitize.sh
stage "fuzzing" bash scripts/fuzz.sh "${FUZZ_SECONDS:-20}"
bundle() {
  bash scripts/bundle_test.sh dist/extshuffle-*-linux-x86_64.tar.gz
}
stage "bundle" bundle
echo "stages: 4 passed, 0 failed"
