#!/usr/bin/env bash
# The whole test suite: install what is missing, build, run every ctest test
# (the gpu-labelled ones skip themselves without a device).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
cd build
ctest --output-on-failure -j "$(nproc)" --timeout 900
