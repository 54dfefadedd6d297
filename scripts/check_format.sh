#!/usr/bin/env bash
# Checks that the C++ lines a change touches are laid out as .clang-format
# says (docs/conventions.md, Names and comments). Only changed lines are
# looked at, never whole files: the code is not reformatted wholesale.
# The change is the difference between the working tree and its base:
#   - $FORMAT_BASE, when set (a commit);
#   - else the merge base with main (or origin/main), when HEAD is past it;
#   - else HEAD itself: only what is not committed yet (on a clean clone of
#     main, nothing: the check passes at once).
# A file moved (git mv) is followed to its old name: only the lines the move
# changed are its changed lines. Prints the layout clang-format wants and
# exits 1 when a changed line differs; exits 0 otherwise. Cheap: it formats
# the changed lines only.
# usage: scripts/check_format.sh
set -euo pipefail
cd "$(dirname "$0")/.."

if ! git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  echo "check_format: not a git checkout, nothing to compare" >&2
  exit 0
fi
if ! command -v clang-format-diff >/dev/null 2>&1; then
  echo "extshuffle: check_format: clang-format-diff not found (package clang-format, scripts/install-deps.sh)" >&2
  exit 1
fi

base="${FORMAT_BASE:-}"
if [ -z "$base" ]; then
  base=HEAD
  for main in main origin/main; do
    if git rev-parse --verify -q "$main^{commit}" >/dev/null; then
      base="$(git merge-base HEAD "$main" 2>/dev/null || echo HEAD)"
      break
    fi
  done
fi

# The lines that differ between $base and the working tree (renames found,
# deletions left out), which clang-format-diff formats; without -i it
# changes nothing and prints what it would do. (git clang-format compares
# without following renames: a moved file would count as all new.)
changed() {
  git diff -M --diff-filter=ACMR -U0 --no-color --no-ext-diff --src-prefix=a/ --dst-prefix=b/ "$base" -- \
    '*.cpp' '*.hpp' '*.cu' '*.cuh' '*.h'
}
formatter=(clang-format-diff -p1 -regex '.*\.(cpp|hpp|cu|cuh|h)' -binary "$(command -v clang-format)")
out="$(changed | "${formatter[@]}" 2>&1)" || true
if [ -z "$out" ]; then
  exit 0
fi
echo "$out"
echo "extshuffle: check_format: changed lines differ from .clang-format's layout (against $(git rev-parse --short "$base")); run: git diff -M -U0 $base | clang-format-diff -p1 -i" >&2
exit 1
