#!/usr/bin/env bash
# Builds the relocatable bundle dist/extshuffle-<version>-linux-x86_64.tar.gz:
#   bin/    extshuffle, permlab and the benchmark programs
#   lib/    every shared library they need beyond glibc, libstdc++/libgcc and
#           the NVIDIA driver, as the dynamic linker itself resolves them (ldd)
#   tests/  the rooms' test executables (<room>_tests), the manifest of their
#           files (file, labels, executable) and run_tests.sh
#   python/ the Python package extshuffle (when the build made it), whose
#           tests (tests/python) run_tests.sh runs as python_package_tests
#   share/extshuffle/  README.md and data/ (the README examples' inputs)
#   gpu_check.sh  everything a GPU machine should run, from the bundle
#   REQUIREMENTS  the newest glibc and libstdc++ symbol versions used
# Every binary and library is stripped and gets an $ORIGIN-relative run path,
# so the bundle runs from any directory on x86-64 Linux with glibc >= the
# version in REQUIREMENTS, without installing anything; the CUDA runtime is
# linked statically and needs only the driver that comes with a GPU.
# usage: scripts/bundle.sh [--no-build] [--build-dir DIR] [--out DIR]
#   --no-build   reuse an existing Release build (CI's first stage made it)
set -euo pipefail
cd "$(dirname "$0")/.."
build=build
out=dist
do_build=1
while [ $# -gt 0 ]; do
  case "$1" in
    --no-build) do_build=0 ;;
    --build-dir) build="$2"; shift ;;
    --out) out="$2"; shift ;;
    *) echo "usage: scripts/bundle.sh [--no-build] [--build-dir DIR] [--out DIR]" >&2; exit 2 ;;
  esac
  shift
done
for tool in patchelf strip objdump; do
  command -v "$tool" >/dev/null || { echo "bundle.sh: $tool is missing (scripts/install-deps.sh installs it)" >&2; exit 1; }
done
if [ "$do_build" = 1 ]; then
  source scripts/generator.sh
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$build" -j "$(nproc)"
fi
for manifest in programs tests libraries; do
  [ -f "$build/bundle/$manifest.manifest" ] || { echo "bundle.sh: $build/bundle/$manifest.manifest missing: configure with tests and benchmarks" >&2; exit 1; }
done

version=$(sed -n 's/^project(extshuffle VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
name="extshuffle-$version-linux-x86_64"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
stage="$work/$name"
mkdir -p "$stage/bin" "$stage/lib" "$stage/tests" "$stage/share/extshuffle"

# 1. Our files.
while read -r path; do install -m 755 "$path" "$stage/bin/"; done < "$build/bundle/programs.manifest"
while read -r path; do install -m 755 "$path" "$stage/lib/"; done < "$build/bundle/libraries.manifest"
: > "$stage/tests/tests.manifest"
test_executables=()
while IFS=$'\t' read -r test labels path; do
  executable=$(basename "$path")
  if [ ! -f "$stage/tests/$executable" ]; then
    install -m 755 "$path" "$stage/tests/$executable"
    test_executables+=("$stage/tests/$executable")
  fi
  printf '%s\t%s\t%s\n' "$test" "$labels" "$executable" >> "$stage/tests/tests.manifest"
done < "$build/bundle/tests.manifest"
install -m 755 scripts/bundle/run_tests.sh "$stage/tests/run_tests.sh"
# The Python package and its tests (docs/python.md), when the build made it.
modules=("$build"/python/extshuffle/_native*.so)
if [ -f "${modules[0]}" ]; then
  mkdir -p "$stage/python/extshuffle" "$stage/tests/python"
  install -m 644 "$build"/python/extshuffle/*.py "$stage/python/extshuffle/"
  install -m 755 "${modules[0]}" "$stage/python/extshuffle/"
  install -m 644 tests/python/*.py "$stage/tests/python/"
  install -m 755 scripts/bundle/python_package_tests "$stage/tests/python_package_tests"
  printf 'python_package_tests\tpython\tpython_package_tests\n' >> "$stage/tests/tests.manifest"
fi
shopt -s nullglob
install -m 755 scripts/gpu_check.sh "$stage/gpu_check.sh"
cp README.md "$stage/share/extshuffle/"
cp -r data "$stage/share/extshuffle/"
ours=("$stage"/bin/* "$stage"/lib/*.so "${test_executables[@]}" "$stage"/python/extshuffle/*.so)
strip --strip-unneeded "${ours[@]}"

# 2. Their shared libraries, as the dynamic linker resolves them here. Left
#    out: glibc's own libraries, libstdc++ and libgcc_s (every system has
#    them; REQUIREMENTS says which versions) and the NVIDIA driver (it comes
#    with the GPU and must match its kernel module).
#    (scripts/bundle/system_libraries.regex; scripts/bundle_test.sh hides
#    every other library the files name.)
system_libraries=$(cat scripts/bundle/system_libraries.regex)
declare -A needed=()
for file in "${ours[@]}"; do
  while read -r soname arrow path _; do
    [ "$arrow" = "=>" ] || continue
    [[ "$soname" =~ $system_libraries ]] && continue
    if [ "$path" = "not" ]; then echo "bundle.sh: $file needs $soname, which is not found" >&2; exit 1; fi
    needed["$soname"]="$path"
  done < <(ldd "$file")
done
for soname in "${!needed[@]}"; do
  cp -L "${needed[$soname]}" "$stage/lib/$soname"
  chmod 644 "$stage/lib/$soname"
  strip --strip-unneeded "$stage/lib/$soname"
done

# 3. Run paths relative to each file, so that the bundle works from anywhere.
for file in "$stage"/bin/* "${test_executables[@]}"; do patchelf --set-rpath '$ORIGIN/../lib' "$file"; done
for file in "$stage"/lib/*.so*; do patchelf --set-rpath '$ORIGIN' "$file"; done
for file in "$stage"/python/extshuffle/*.so; do patchelf --set-rpath '$ORIGIN/../../lib' "$file"; done

# 4. Every library of every file must now resolve inside the bundle.
for file in "$stage"/bin/* "${test_executables[@]}" "$stage"/lib/*.so* "$stage"/python/extshuffle/*.so; do
  while read -r soname arrow path _; do
    [ "$arrow" = "=>" ] || continue
    [[ "$soname" =~ $system_libraries ]] && continue
    case "$(realpath "$path")" in
      "$(realpath "$stage")"/lib/*) ;;
      *) echo "bundle.sh: $file resolves $soname to $path, outside the bundle" >&2; exit 1 ;;
    esac
  done < <(ldd "$file")
done

# 5. The newest glibc and libstdc++ symbol versions any file uses.
newest() { objdump -T "$stage"/bin/* "${test_executables[@]}" "$stage"/lib/*.so* "$stage"/python/extshuffle/*.so 2>/dev/null |
             grep -o "$1_[0-9][0-9.]*" | sed "s/^$1_//" | sort -V | tail -n 1; }
{
  echo "glibc $(newest GLIBC)"
  echo "libstdc++ GLIBCXX_$(newest GLIBCXX)"
  # The nvcc flags live in flags.make (Makefiles) or build.ninja (Ninja).
  cuda_code=$(cat "$build/src/device/cuda/CMakeFiles/extshuffle_cuda.dir/flags.make" "$build/build.ninja" 2>/dev/null |
                grep -o 'code=\[[^]]*\]' | sort -u | tr '\n' ' ' || true)
  echo "cuda_code ${cuda_code:-none}"
  echo "built_on $(. /etc/os-release && echo "$PRETTY_NAME"), $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
} > "$stage/REQUIREMENTS"

mkdir -p "$out"
tar -C "$work" -czf "$out/$name.tar.gz" "$name"
echo "bundle: $out/$name.tar.gz ($(du -h "$out/$name.tar.gz" | cut -f1), $(ls "$stage/lib" | wc -l) libraries)" >&2
cat "$stage/REQUIREMENTS" >&2
