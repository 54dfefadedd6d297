# Sourced by scripts/sanitize.sh and scripts/test.sh: which of the library's
# own tests the sanitizer stage runs. One definition for both stages, so that
# each of those tests runs once in CI, under the sanitizers, and the Release
# stage runs every other test (a plain `ctest` in build/ still runs all).
#
# The library's own tests are those of build-asan/ without any of these
# labels: statistical and lab (they would double the stage's time and run
# the paths of the fast tests with more samples), binary (black-box tests of
# the program: scripts/sanitize.sh runs a subset of them from build/ against
# the instrumented program, and the Release stage runs them all), mpi and
# python (not built there), scripts (the CI scripts' checks, no library code)
# and gpu (built there without CUDA, where they only skip; the Release stage
# runs them on the device when there is one).
sanitizer_excluded_labels='statistical|lab|binary|mpi|python|scripts|gpu'

# Of those, the tests left to the Release stage (ctest -E regular
# expression), each with what runs its paths under the sanitizers:
# One executor test runs a plan of 2^20 records through up to 8 levels four
# times (65 s under ASan); the same splits and routes run in the other
# executor and node-path tests.
sanitizer_release_only='ExternalExecutor\.OneTwoAndThreeDiskLevelsGiveTheSameBytes$'
# Two exhaustive bijection tests evaluate Philox on every index of 24 widths
# and on millions of seeds (60 s), register arithmetic into a vector of
# flags; the same evaluations, over smaller ranges, run in the other
# VariablePhilox and batch-kernel tests.
sanitizer_release_only+='|VariablePhilox\.(IsABijectionAtEveryWidth|MinimumWidthReachesEveryOrderOfSmallN)$'
# The oracle test of the addressable permutation at every level count
# (47 s): its three other tests run there, through the same levels with
# fewer records.
sanitizer_release_only+='|AddressablePermutation\.MatchesTheOracleAtEveryLevelCount$'
# Four that repeat, at volume, a path a lighter test of their file takes
# there (each 30-55 s): large chunks split in RAM
# (ExternalExecutor.LargeRecordsInMemoryChunksAndRouted), a routed walk
# resumed (WalkCheckpoint.HeavyTailedLinesRoutedAndInMemoryChunks), every
# work split of the gather (RecordGather.ByPermutationEqualsThePlainLoop) and
# every level of the reference (ReferenceExecutor.MatchesTheOracle).
sanitizer_release_only+='|ExternalExecutor\.SplitsOfLargeChunksReadChunkByChunkInRam$|WalkCheckpoint\.LargeFixedRecordsRouted$'
sanitizer_release_only+='|RecordGather\.ShuffleEqualsItsDefinitionForEveryWorkSplit$|ReferenceExecutor\.OutputIsAPermutationAcrossLevels$'
# Two more of the walk's (118 s and 42 s): the grid of every node path (96
# runs of 4 record sizes, 4 counts, 6 budgets), whose paths each run there
# in a test of their own (in RAM and chunks in memory:
# ExternalExecutor.MatchesReferenceAcrossSizesAndBudgets and
# LargeRecordsInMemoryChunksAndRouted; routed and routed below routed:
# NodePaths.ManyRoutedLevels; a leaf in windows and routed into windows:
# NodePaths.LargeRecordsReadAndWriteTheirBytesTwice and
# LeafOrdersThroughScratchSpace), and the schedule's arithmetic checked
# against a walk of 2^20 records, which NodePaths.LeafOrdersThroughScratchSpace
# (fixed-size records, every budget) and VariableExecutor.ScheduleMatchesWhatRuns
# check there on smaller walks.
sanitizer_release_only+='|NodePaths\.FixedRecordsOnEveryPathMatchTheOracleAndTheSchedule$|ExternalExecutor\.ScheduleMatchesWhatRuns$'
# The golden test of the oracle (22 s): it runs only the oracle of
# tests/support/plan_oracle.hpp and core's inline code, compiled into the
# ioperm room's object, which build-asan links from the Release tree
# uninstrumented: nothing of it is checked there.
# Golden.PermutationVersionTwoIsPinned, which runs the library's walk to the
# same hashes, stays.
sanitizer_release_only+='|Golden\.TheOracleGivesThePinnedHashes$'

# And the tests that run in both stages: under the sanitizers they thin
# their case loops ($EXTSHUFFLE_SANITIZED, tests/support/sanitized_cases.hpp:
# fewer cases, every path of the full loop still reached), and the Release
# stage runs their whole loop. Each test's comment says which cases it keeps.
sanitizer_thinned_tests=(
  ExternalExecutor.HeadCountIsThePrefixOfTheFullShuffle
  NodePaths.HeadCountThroughRoutedSplitsAndWindows
  TextGatherInRam.HeavyTailedRecordsComeOutInTheOraclesOrderAtEveryStagingSizeAndThreadCount
)
sanitizer_thinned="^($(IFS='|'; echo "${sanitizer_thinned_tests[*]//./\\.}"))\$"

# sanitized_library_tests ASAN_BUILD: the names of the tests the sanitizer
# stage runs from ASAN_BUILD (configured: its tests/test_files.tsv), one a
# line, sorted. Read from build/'s listings of each test's file (the two
# trees build the same test sources; ASAN_BUILD's executables need not be
# built yet), so scripts/test.sh can leave them out of the Release stage
# while build-asan is still being built.
sanitized_library_tests() {
  local asan_build="$1"
  awk -F'\t' -v skip="^($sanitizer_excluded_labels)\$" '
    NR == FNR {
      n = split($2, labels, ","); keep = 1
      for (i = 1; i <= n; i++) if (labels[i] ~ skip) keep = 0
      if (keep) wanted[$1] = 1
      next
    }
    $1 in wanted {print $2}' "$asan_build/tests/test_files.tsv" $(find build/tests -name '*_tests_sources.txt') |
    { grep -Ev "$sanitizer_release_only" || true; } | sort -u
}

# release_skipped_tests ASAN_BUILD: those of them that the Release stage
# leaves out (all but the thinned ones), as a ctest -E regular expression
# of exact names, one group of alternatives (ctest's expressions take at
# most 9 groups, and it quietly ignores one of more than about 40 KB: this
# one is 13 KB; check_every_test_runs would see it ignored); empty when
# there are none.
release_skipped_tests() {
  local names
  names=$(sanitized_library_tests "$1" | { grep -Ev "$sanitizer_thinned" || true; })
  [ -z "$names" ] && return 0
  echo "^($(sed 's/[]\\.*+?^$(){}|[]/\\&/g' <<<"$names" | paste -sd '|'))\$"
}

# ctest_names DIR [ctest arguments]: the names of the tests ctest selects in
# DIR (ctest -N: nothing runs), one a line, sorted.
ctest_names() {
  local dir="$1"
  shift
  (cd "$dir" && ctest -N "$@") | sed -n 's/^ *Test *#[0-9]*: //p' | sort -u
}

# check_every_test_runs ASAN_BUILD: fails, naming them, when a test of
# build/ runs in neither stage (the Release stage's selection, scripts/test.sh,
# and the sanitizer stage's), or when ctest's selection in ASAN_BUILD is not
# the one the Release stage left out (a drift between the labels and the
# listings). Two seconds of ctest -N.
check_every_test_runs() {
  local asan_build="$1" skip all release sanitized expected missing both thinned
  skip=$(release_skipped_tests "$asan_build")
  all=$(ctest_names build)
  release=$(ctest_names build ${skip:+-E "$skip"})
  sanitized=$(ctest_names "$asan_build" -LE "^($sanitizer_excluded_labels)\$" -E "_NOT_BUILT\$|$sanitizer_release_only")
  expected=$(sanitized_library_tests "$asan_build")
  if [ "$sanitized" != "$expected" ]; then
    echo "sanitize: ctest in $asan_build selects other tests than scripts/sanitized_tests.sh lists" \
      "(< ctest, > the listings):" >&2
    diff <(echo "$sanitized") <(echo "$expected") | grep '^[<>]' | head -n 20 >&2
    return 1
  fi
  missing=$(comm -23 <(echo "$all") <(printf '%s\n%s\n' "$release" "$sanitized" | sort -u))
  if [ -n "$missing" ]; then
    echo "sanitize: tests of build/ that neither the Release stage nor this one runs:" >&2
    head -n 20 <<<"$missing" >&2
    return 1
  fi
  # In both stages: the thinned tests, all of them, and no other (a Release
  # expression that ctest ignored would leave every test in both).
  both=$(comm -12 <(echo "$release") <(echo "$sanitized"))
  thinned=$({ grep -E "$sanitizer_thinned" <<<"$sanitized" || true; })
  if [ "$both" != "$thinned" ] || [ "$(grep -c . <<<"$thinned")" != "${#sanitizer_thinned_tests[@]}" ]; then
    echo "sanitize: the tests run in both stages ($(grep -c . <<<"$both")) are not the thinned ones" \
      "($(grep -c . <<<"$thinned") found of sanitizer_thinned's), scripts/sanitized_tests.sh" >&2
    return 1
  fi
  echo "sanitize: $(wc -l <<<"$all") tests: $(wc -l <<<"$release") in the Release stage," \
    "$(wc -l <<<"$sanitized") here, $(wc -l <<<"$both") of them in both" >&2
}
