// From the command line to the library's Config: every check that needs no
// input (syntax of sizes, seeds, ranges; which operands are files), with the
// defaults resolved (memory budget, thread count, seed).
#pragma once

#include <string>
#include <vector>

#include "extshuffle/driver/config.hpp"
#include "options.hpp"

namespace extshuffle::cli {

struct Request {
  driver::Config config;  // input_path(s) and output_path: those of the first dataset
  // One dataset: its inputs (read as one, their records concatenated) and
  // its output (a name pattern with --shards/--split).
  struct Dataset {
    std::vector<std::string> inputs;
    std::string output;
  };
  // The datasets, in order: one, or several aligned inputs ("x.npy y.npy
  // -o xs.npy -o ys.npy") shuffled by one permutation, one input each.
  // With -e or -i: the one output, from input "-".
  std::vector<Dataset> datasets;
};

// Validates `options` and builds the request. Draws a random seed when none
// is given (logged at info level so -v shows it) and warns when the testing
// knobs change the permutation, through spdlog's default logger. Throws
// UsageError with a one-line message, and IoError / InputError for a
// --random-source file that cannot be read or is too short. Cost: reads /proc
// and /sys for the default memory budget, and the random source's first 8
// bytes; no input is opened.
Request make_config(const Options& options);

}  // namespace extshuffle::cli
