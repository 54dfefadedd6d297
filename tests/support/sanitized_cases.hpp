// Case loops thinned under the sanitizers. A few library tests repeat each
// of their paths over many cases (budgets, head counts, threads); under
// ASan that costs the sanitizer stage up to a minute a test. There they take
// a subset of their cases that still reaches every path of the whole loop,
// and the Release stage runs the whole loop (scripts/sanitized_tests.sh
// lists these tests, which run in both stages).
#pragma once

#include "command.hpp"

namespace extshuffle::testing {

// `whole`, or `thinned` when the code under test runs under the sanitizers:
// binary_is_sanitized() (command.hpp), true in an instrumented test and
// wherever $EXTSHUFFLE_SANITIZED is set, which scripts/sanitize.sh sets for
// every test it runs (the tests of most rooms link the Release build's
// objects there, uninstrumented, against the instrumented library).
template <typename Cases>
Cases thinned_under_sanitizers(Cases whole, Cases thinned) {
  return binary_is_sanitized() ? thinned : whole;
}

}  // namespace extshuffle::testing
