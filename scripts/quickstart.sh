#!/usr/bin/env bash
# Quick start: install what is missing, build, shuffle the bundled sample.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
build/extshuffle data/sample-records-u64.bin "$out/shuffled.bin" --record-size 8 --seed 42 --stats
echo "extshuffle: shuffled data/sample-records-u64.bin with seed 42 (first records of the output):"
od -A d -t u8 -N 64 "$out/shuffled.bin"
