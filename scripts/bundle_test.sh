#!/usr/bin/env bash
# CI's check of the relocatable bundle (scripts/bundle.sh): unpacks it in a
# fresh directory outside the source tree and, in a private mount namespace
# where every system copy of every library the bundle carries is replaced by
# an empty file and the build tree by an empty directory,
#   1. asks the dynamic linker to load every program, test and library of
#      the bundle: each library must resolve inside the bundle (a library the
#      bundle lacks now fails to load);
#   2. runs the bundle's own programs and, through tests/run_tests.sh, the
#      tests labelled `gpu` (they skip without a device) and the black-box
#      test files that reach what the bundle carries (`relocation_files`
#      below): every library of lib/ and share/extshuffle/. The other CLI
#      files test the same program, already run in CI's first stage; the
#      bundle's whole suite runs on a bare Debian (scripts/bare_debian_test.sh)
#      and with `tests/run_tests.sh` alone.
# zlib stays visible in step 2 only: the system's python3 and zstd, which the
# CLI tests use as independent checkers, load it themselves (step 1 proves
# the bundle's own copy is the one its files use). Needs root (unshare).
# usage: scripts/bundle_test.sh dist/extshuffle-<version>-linux-x86_64.tar.gz
set -euo pipefail
tarball=$(realpath "$1")
source_dir=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/extshuffle-bundle-test-XXXXXX)
trap 'rm -rf "$work"' EXIT
tar -C "$work" -xzf "$tarball"
bundle=$(echo "$work"/extshuffle-*)
empty="$work/empty.so"
: > "$empty"

# Every system file that the dynamic linker could take for a bundled library.
system_copies() {
  local soname="$1"
  {
    ldconfig -p | awk -v s="$soname" '$1 == s {print $NF}'
    for dir in /lib /usr/lib /lib64 /usr/lib64 /lib/x86_64-linux-gnu /usr/lib/x86_64-linux-gnu /usr/local/lib \
               /usr/local/cuda/lib64 /usr/local/cuda/lib; do
      [ -e "$dir/$soname" ] && echo "$dir/$soname"
    done
  } | while read -r path; do realpath "$path"; done | sort -u
}
# The test executables: the third column of the manifest (scripts/bundle.sh),
# but python_package_tests, a script.
mapfile -t test_executables < <(awk -F'\t' '$3 != "python_package_tests" {print "'"$bundle"'/tests/" $3}' \
                                   "$bundle/tests/tests.manifest" | sort -u)
# Every library any file of the bundle names (DT_NEEDED), whether the bundle
# carries it or not, except those every system has (bundle.sh leaves them out).
system_libraries=$(cat "$source_dir/scripts/bundle/system_libraries.regex")
mapfile -t named < <(for file in "$bundle"/bin/* "${test_executables[@]}" "$bundle"/lib/*.so*; do
                       readelf -d "$file" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'
                     done | sort -u | grep -Ev "$system_libraries")
hidden=()
for soname in "${named[@]}"; do
  while read -r path; do [ -n "$path" ] && hidden+=("$soname=$path"); done < <(system_copies "$soname")
done
echo "bundle_test.sh: the bundle's files name ${#named[@]} libraries beyond the system's;" \
  "hiding ${#hidden[@]} system copies" >&2

# Runs "$@" in a mount namespace with the system copies (but those of the
# sonames in $KEEP) hidden and the source tree's build directory emptied.
in_hidden_system() {
  KEEP="${KEEP:-}" HIDDEN="${hidden[*]}" EMPTY="$empty" BUILD="$source_dir/build" \
    unshare --mount --propagation private bash -c '
      set -euo pipefail
      for entry in $HIDDEN; do
        soname=${entry%%=*}; path=${entry#*=}
        [[ " $KEEP " == *" $soname "* ]] && continue
        mount --bind "$EMPTY" "$path"
      done
      [ -d "$BUILD" ] && mount -t tmpfs none "$BUILD"
      exec "$@"' bash "$@"
}

# 1. Every file loads with the bundle's libraries only.
in_hidden_system bash -c '
  set -euo pipefail
  failed=0
  for file in "$1"/bin/* "${@:2}" "$1"/lib/*.so*; do
    out=$(ldd "$file" 2>&1) || true
    if grep -Eq "not found|file too short|error" <<<"$out"; then
      echo "bundle_test.sh: $file does not load:" >&2; grep -E "not found|file too short|error" <<<"$out" >&2
      failed=1
    fi
  done
  exit $failed' bash "$bundle" "${test_executables[@]}"
echo "bundle_test.sh: every program, test and library loads from the bundle" >&2

# 2. The relocated programs and the black-box tests, from another directory.
# The files that reach each bundled library and each path the program finds
# relative to itself:
relocation_files=(
  fixed_records_cli_test   # threads (libgomp), scratch on disk (libstxxl), Philox (libhwy)
  dataset_outputs_cli_test # gzip and zstd outputs (libisal, libzstd), shards, --manifest
  error_messages_test      # errors: one line, the exit code
  readme_examples_test     # the README's commands on share/extshuffle/data
)
selection=(--label gpu)
for file in "${relocation_files[@]}"; do selection+=(--file "$file"); done
# Three tests of those files check volume, not relocation (a memory cap,
# the huge-page count, -n on millions of records: 36 of the stage's
# test-seconds); the program's threads, scratch space and Philox kernels are
# reached here by FixedRecordsCli.SameSeedSameBytesAcrossMemoryThreadsAndStdio,
# and stage 1 runs them against the same program (GoogleTest's filter, which
# the runner narrows to its files).
volume_tests='FixedRecordsCli.PeakMemoryStaysWithinTheBudget:FixedRecordsCli.StatsSayWhetherHugePagesWereUsed'
volume_tests+=':FixedRecordsCli.HeadCountIsThePrefixOfTheFullShuffle'
cd "$work"
unset EXTSHUFFLE_BINARY EXTSHUFFLE_SOURCE_DIR EXTSHUFFLE_FAULT_SHIM
GTEST_FILTER="-$volume_tests" KEEP="libz.so.1" in_hidden_system bash -c '
  set -euo pipefail
  b="$1"
  "$b/bin/extshuffle" --version
  "$b/bin/extshuffle" --record-size 8 --seed 7 "$b/share/extshuffle/data/sample-records-u64.bin" out.bin
  "$b/bin/extshuffle" --device cuda --record-size 8 "$b/share/extshuffle/data/sample-records-u64.bin" gpu.bin ||
    [ $? = 1 ]  # without a GPU: a one-line error and exit 1
  "$b/tests/run_tests.sh" "${@:2}" --jobs "$(nproc)" --log-dir logs' bash "$bundle" "${selection[@]}"
