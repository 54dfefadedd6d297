#!/usr/bin/env bash
# Configures and builds extshuffle into build/ (Release). Extra arguments go
# to CMake, e.g. scripts/build.sh -DEXTSHUFFLE_CUDA=OFF.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/generator.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
cmake --build build -j "$(nproc)"
