// shuf -n 0 reads no input and opens no input file: nothing of it would be
// output (coreutils' own test suite, tests/shuf/shuf.sh in its source tree, runs it on
// an unreadable file; our mirror of it: tests/cli/shuf_compat_test.cpp). extshuffle does
// the same unless part of the input is output anyway: the header lines of
// CSV, TSV or --header N, and a .npy array's header.
#pragma once

#include <string>

#include "extshuffle/modes/mode_options.hpp"

namespace extshuffle::modes {

// Whether `options` outputs nothing of `input` (the dataset's first input):
// -n 0, no header kept (by --header, --format or the input's extension), an input not named .npy,
// and neither --verify nor --dry-run (which have their own say about -n).
bool outputs_nothing_of_input(const ModeSlices& options, const std::string& input);

// Writes an empty output (a valid empty stream for .gz and .zst) and opens
// no input. Throws IoError for a bad destination.


}  // namespace extshuffle::modes
