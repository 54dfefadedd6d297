#!/usr/bin/env bash
# Checks that the C++ lines a change touches are laid out as .clang-format
# says (docs/conventions.md, Names and comments). Only changed lines are
# looked at, never whole files: the code is not reformatted wholesale.
# The change is the difference between the working tree and its base:
#   - $FORMAT_BASE, when set (a commit);
#   - else the merge base with main (or origin/main), when HEAD is past it;
#   - else HEAD itself: only what is not committed yet (on a clean clone of
#     main, nothing: the check passes at once).
# Prints the layout clang-format wants and exits 1 when a changed line
# differs; exits 0 otherwise. Cheap: it formats the changed lines only.
# usage: scripts/check_format.sh
set -euo pipefail
cd "$(dirname "$0")/.."

if ! git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  echo "check_format: not a git checkout, nothing to compare" >&2
  exit 0
fi
if ! command -v git-clang-format >/dev/null 2>&1; then
  echo "extshuffle: check_format: git-clang-format not found (package clang-format, scripts/install-deps.sh)" >&2
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

# git clang-format formats the lines that differ between $base and the
# working tree; with --diff it changes nothing and prints what it would do.
out="$(git clang-format --binary "$(command -v clang-format)" --diff --extensions cpp,hpp,cu,cuh,h "$base" -- 2>&1)" || true
case "$out" in
  "" | "no modified files to format" | "clang-format did not modify any files")
    exit 0
    ;;
esac
echo "$out"
echo "extshuffle: check_format: changed lines differ from .clang-format's layout (against $(git rev-parse --short "$base")); run: git clang-format $base" >&2
exit 1
