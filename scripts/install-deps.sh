#!/usr/bin/env bash
# Installs the Debian packages extshuffle needs, only those that are missing.
# Uses sudo when not root; never asks questions (no standard input needed).
# usage: scripts/install-deps.sh [--bench]
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  libstxxl-dev libcli11-dev libspdlog-dev libgtest-dev librandom123-dev
  libxxhash-dev libzstd-dev zlib1g-dev libisal-dev zstd gzip
  # Highway: the SIMD Philox kernels with run-time dispatch (src/device/cpu).
  libhwy-dev
  # The manifest (--manifest): written and read back as JSON; the tests check its xxh64 digests.
  nlohmann-json3-dev python3-xxhash
  python3 python3-numpy python3-matplotlib
  # CI's reliability stages: clang with libFuzzer and its sanitizer runtimes
  # (scripts/fuzz.sh), chattr for the unwritable-directory test run as root,
  # strace for shuf.sh's getrandom check (tests/cli/shuf_compat_test.cpp).
  clang libclang-rt-14-dev e2fsprogs strace
  # The layout of changed lines (scripts/check_format.sh, .clang-format):
  # clang-format and its clang-format-diff.
  clang-format
  # The Python package (python/, docs/python.md): built with pybind11 for
  # Debian's python3; its tests run pytest, torch's DataLoader, tqdm and
  # scipy's chi-square; `pip install .` offline uses setuptools and wheel.
  python3-dev pybind11-dev python3-pytest python3-torch python3-tqdm python3-scipy
  python3-setuptools python3-wheel python3-pip
  # docs/python.md's WebDataset example, run as a test: images decoded by
  # torchvision (tests/python/test_dataset_docs.py skips without it).
  python3-torchvision
  # The bundle's suite on a bare Debian 12 (scripts/bare_debian_test.sh).
  debootstrap
  # The suite run with every core kept busy by another job
  # (scripts/busy_machine_test.sh): the tests wait on events, not the clock.
  stress-ng
  # The relocatable bundle (scripts/bundle.sh): run paths set with patchelf.
  patchelf
  # extshuffle-mpi (EXTSHUFFLE_MPI) and its tests: Open MPI and mpirun.
  libopenmpi-dev openmpi-bin
  # The tar tests: GNU tar (sparse members, hard links), and the compressions
  # extshuffle names as unsupported (tests/cli/tar_edges_cli_test.cpp).
  tar xz-utils bzip2 lz4
)
# --bench: also what bench/ needs beyond the build (GNU time for peak RSS in
# bench/suite.sh, perf for bench/profile.sh); CI does not need them.
if [ "${1:-}" = "--bench" ]; then
  packages+=(time linux-perf)
fi

# One dpkg-query for all of them: one per package read dpkg's database 45
# times (11 s on a loaded VM, every CI run).
declare -A installed=()
while read -r name status; do
  [ "$status" = "install ok installed" ] && installed["$name"]=1
done < <(dpkg-query -W -f='${Package} ${Status}\n' "${packages[@]}" 2>/dev/null || true)
missing=()
for p in "${packages[@]}"; do
  [ -n "${installed[$p]:-}" ] || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "extshuffle: installing ${missing[*]}" >&2
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo -n)
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq </dev/null
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" </dev/null
