#!/usr/bin/env bash
# Two builds of extshuffle side by side in one run, case by case (A then B
# for each case of bench/suite.sh, so both meet the same machine state):
# the before/after figures of a change that must not slow anything down.
#
# usage: bench/compare_builds.sh BUILD_A BUILD_B [CASES]
#   BUILD_A, BUILD_B  build directories (each with extshuffle and bench/*)
#   CASES             comma-separated suite cases (default: all but scaling)
# environment: REPEATS (default 3) and the rest as bench/suite.sh;
#   OUT_PREFIX=bench/results/compare  results go to OUT_PREFIX_a.txt, _b.txt
#   ROUNDS=1      rounds of all cases, A then B in each (each with REPEATS runs):
#                 on a machine whose load drifts, ROUNDS=3 REPEATS=1 sets A and B
#                 side by side run by run instead of case by case
#   TOOLS_B=extshuffle  the tools of B's runs (all: every tool of the case, so
#                 that B's results hold the floors and peers of the same run)
# Tabulate with: bench/compare_report.py OUT_PREFIX_a.txt OUT_PREFIX_b.txt
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { echo "usage: $0 BUILD_A BUILD_B [CASES]" >&2; exit 2; }
build_a=$(realpath "$1")
build_b=$(realpath "$2")
cases=${3:-fixed8_1g,fixed8_8g,text_1g,text_4g,fixed4k_4g,threads}
prefix=${OUT_PREFIX:-bench/results/compare}
export REPEATS=${REPEATS:-3}
tools_b=${TOOLS_B:-extshuffle}
[ "$tools_b" = all ] && tools_b=""
rm -f "${prefix}_a.txt" "${prefix}_b.txt"
for ((round = 1; round <= ${ROUNDS:-1}; round++)); do
  for c in ${cases//,/ }; do
    TOOLS=extshuffle BUILD_DIR=$build_a OUT=${prefix}_a.txt bench/suite.sh --cases "$c" --append
    TOOLS=$tools_b BUILD_DIR=$build_b OUT=${prefix}_b.txt bench/suite.sh --cases "$c" --append
  done
done
