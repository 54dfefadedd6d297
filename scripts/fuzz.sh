#!/usr/bin/env bash
# Builds the libFuzzer targets of fuzz/ (clang++, ASan + UBSan) into
# build-fuzz/ and runs each for a bounded time: scripts/fuzz.sh [SECONDS]
# (default 30 per target). Every target with a seed corpus in
# fuzz/corpus/<target>/ runs; the corpus is copied first so that a run never
# adds files to the repository. Fails on any crash, leak, sanitizer report or
# timeout; the input that caused it is left in build-fuzz/artifacts/ (keep it
# in fuzz/corpus/<target>/ as a regression input once the bug is fixed).
# scripts/fuzz.sh --build-only builds the targets and runs none.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/generator.sh
build_only=0
if [ "${1:-}" = --build-only ]; then
  build_only=1
  shift
fi
seconds="${1:-30}"
# libFuzzer reads -max_total_time=0 as "no limit": refuse it.
[[ "$seconds" =~ ^[1-9][0-9]*$ ]] || { echo "fuzz: SECONDS must be a positive integer, not '$seconds'" >&2; exit 2; }
build="build-fuzz"

CXX="${FUZZ_CXX:-clang++}" cmake -S fuzz -B "$build" -DCMAKE_CXX_COMPILER="${FUZZ_CXX:-clang++}" >/dev/null
if ! cmake --build "$build" -j "$(nproc)" >"$build/build.log" 2>&1; then
  echo "fuzz: the targets do not build; last lines of $build/build.log:" >&2
  tail -n 40 "$build/build.log" >&2
  exit 1
fi
[ "$build_only" = 1 ] && exit 0

mkdir -p "$build/artifacts"
status=0
# One target per core at a time: each libFuzzer process is single-threaded,
# so running them side by side fuzzes each as long in half the wall time.
fuzz_one() {
  local target="$1" work="$build/corpus/$1"
  rm -rf "$work"
  mkdir -p "$work"
  cp "fuzz/corpus/$target/"* "$work"/
  local options=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
                 -artifact_prefix="$build/artifacts/$target-")
  [ -f "fuzz/$target.dict" ] && options+=(-dict="fuzz/$target.dict")
  echo "fuzz: $target for ${seconds} s" >&2
  "$build/$target" "${options[@]}" "$work" >"$build/$target.log" 2>&1
}
report() {
  local target="$1" rc="$2"
  if [ "$rc" -ne 0 ]; then
    echo "fuzz: $target FAILED; last lines of $build/$target.log:" >&2
    tail -n 40 "$build/$target.log" >&2
    status=1
  else
    grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$build/$target.log" | sed "s/^/fuzz: $target /" >&2
  fi
}
targets=()
for corpus in fuzz/corpus/*/; do targets+=("$(basename "$corpus")"); done
width="$(nproc)"
for ((first = 0; first < ${#targets[@]}; first += width)); do
  pids=()
  batch=("${targets[@]:first:width}")
  for target in "${batch[@]}"; do
    fuzz_one "$target" &
    pids+=("$!")
  done
  for i in "${!batch[@]}"; do
    rc=0
    wait "${pids[$i]}" || rc=$?
    report "${batch[$i]}" "$rc"
  done
done
[ "$status" -eq 0 ] && echo "fuzz: every target ran ${seconds} s without a crash" >&2
exit "$status"
