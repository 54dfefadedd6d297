#!/usr/bin/env bash
# Everything to run on a machine with an NVIDIA GPU (H100 or H200), from the
# unpacked bundle (scripts/bundle.sh), with nothing installed: the GPU tests,
# the four compute-sanitizer tools over them, the whole test suite, the
# benchmarks, and --device cuda against --device cpu on 8 GiB of 8-byte
# records. Raw results go to OUT (default ./gpu-results-<host>-<time>), to be
# copied into bench/results/gpu/ of the repository, where
# `/usr/bin/python3 bench/cuda_report.py bench/results/gpu/<dir>` makes the
# tables and the plot of docs/benchmarks.md. Exit status 1 if a GPU test or a
# sanitizer failed (everything still runs).
# usage: ./gpu_check.sh [--out DIR] [--work-dir DIR] [--quick] [--no-sanitizers]
#   --work-dir DIR  where the 8 GiB input, outputs and scratch go (default
#                   $TMPDIR or /tmp; needs ~25 GiB free); --quick: small sizes
#   compute-sanitizer is found in $COMPUTE_SANITIZER, PATH or /usr/local/cuda*/bin.
set -uo pipefail
bundle=$(cd "$(dirname "$0")" && pwd)
out="gpu-results-$(hostname -s)-$(date -u +%Y%m%dT%H%M%SZ)"
work="${TMPDIR:-/tmp}"
quick=0
sanitizers=1
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out="$2"; shift ;;
    --work-dir) work="$2"; shift ;;
    --quick) quick=1 ;;
    --no-sanitizers) sanitizers=0 ;;
    *) sed -n '2,/^set -uo/p' "$0" | sed '$d' >&2; exit 2 ;;
  esac
  shift
done
mkdir -p "$out"
out=$(cd "$out" && pwd)
summary="$out/summary.txt"
: > "$summary"
status=0
note() { echo "$*" | tee -a "$summary"; }
step() {  # step NAME GATING(1|0) COMMAND...: runs, logs, records the verdict
  local name="$1" gating="$2"
  shift 2
  local start=$SECONDS
  echo "== $name" >&2
  if "$@" >"$out/$name.log" 2>&1; then
    note "PASS $name ($((SECONDS - start)) s)"
  else
    note "FAIL $name ($((SECONDS - start)) s; see $name.log)"
    [ "$gating" = 1 ] && status=1
  fi
}

# 0. The machine.
{
  echo "date $(date -u +%FT%TZ)"
  cat "$bundle/REQUIREMENTS"
  echo "system $(getconf GNU_LIBC_VERSION)"
  nvidia-smi --query-gpu=name,memory.total,driver_version,pcie.link.gen.max,pcie.link.width.max,clocks.max.sm \
    --format=csv 2>&1 || echo "nvidia-smi: not available"
  lscpu | grep -E '^(Model name|CPU\(s\)|Thread|Socket|NUMA node\(s\))' || true
  free -g | head -n 2
} > "$out/machine.txt" 2>&1
cat "$out/machine.txt" >&2

# 1. The GPU tests (gating), then every other test (for the record; some
#    need the system's python3 with numpy, gzip and zstd).
step tests-gpu 1 "$bundle/tests/run_tests.sh" --label gpu --log-dir "$out/tests-gpu"
step tests-all 0 "$bundle/tests/run_tests.sh" --exclude-label gpu --jobs "$(nproc)" --log-dir "$out/tests-all"

# 2. compute-sanitizer's four tools over the GPU tests: any report fails the
#    step (--error-exitcode). The two tests that move 2^32 records and 2^22
#    with the production constants are left out: under the sanitizers they
#    would take hours; the other GPU tests cover the same kernels and paths.
sanitizer="${COMPUTE_SANITIZER:-$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -n 1)}"
if [ "$sanitizers" = 1 ] && [ -n "$sanitizer" ] && [ -x "$sanitizer" ]; then
  "$sanitizer" --version > "$out/compute-sanitizer-version.txt" 2>&1
  for tool in memcheck racecheck initcheck synccheck; do
    extra=""
    [ "$tool" = memcheck ] && extra="--leak-check full"
    GTEST_FILTER='-CudaShuffle.MoreThanTwoToThe32Records:CudaNode.ProductionConstantsMatchTheOracle' \
      step "sanitizer-$tool" 1 "$bundle/tests/run_tests.sh" --label gpu --timeout 7200 \
      --log-dir "$out/sanitizer-$tool" --wrap "$sanitizer --tool $tool $extra --error-exitcode 99 --print-limit 200"
  done
elif [ "$sanitizers" = 1 ]; then
  note "FAIL sanitizers (compute-sanitizer not found: set COMPUTE_SANITIZER)"
  status=1
fi

# 3. The benchmarks (raw BENCH lines; the device is named in each).
quick_flag=()
[ "$quick" = 1 ] && quick_flag=(--quick)
step cuda_shuffle_bench 1 bash -c '"$1" "${@:3}" > "$2/cuda_shuffle_bench.txt"' bash \
  "$bundle/bin/cuda_shuffle_bench" "$out" "${quick_flag[@]}"

# 4. The CLI on 8 GiB of 8-byte records in the page cache with -S 16G,
#    --device cpu against --device cuda (three runs each, alternating; the
#    outputs must be identical). One BENCH line per run.
cli_runs() {  # cli_runs DIR
  local dir="$1" gib=8 memory=16G runs=3
  [ "$quick" = 1 ] && gib=1 memory=4G runs=1
  "$bundle/bin/generate_lines" "$dir/in.bin" "${gib}G" 1 --binary || return 1
  cat "$dir/in.bin" > /dev/null  # into the page cache
  local device run t0 t1 gpu
  gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1)
  for run in $(seq "$runs"); do
    for device in cpu cuda; do
      t0=$(date +%s.%N)
      "$bundle/bin/extshuffle" --record-size 8 --seed 1 -S "$memory" -T "$dir" --device "$device" --stats \
        "$dir/in.bin" "$dir/$device.bin" 2>> "$out/cli_stats.txt" || return 1
      t1=$(date +%s.%N)
      echo "BENCH cli_fixed8 device=\"${gpu:-unknown}\" device_flag=$device gib=$gib memory=$memory run=$run" \
        "seconds=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')" >> "$out/cli_bench.txt"
    done
    cmp "$dir/cpu.bin" "$dir/cuda.bin" || return 1
  done
}
cli_bench() {
  local dir rc=0
  dir=$(mktemp -d "$work/extshuffle-gpu-check-XXXXXX") || return 1
  cli_runs "$dir" || rc=$?
  rm -rf "$dir"
  return "$rc"
}
step cli_bench 1 cli_bench

note "gpu_check.sh: results in $out"
exit $status
