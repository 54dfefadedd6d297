// shuf's modes' slice of a Job's options (docs/conventions.md, Rooms): the
// generated inputs of -e and -i. The Job holds it (job.hpp,
// JobOptions::mode); a mode reads it with the other slices it needs, all by
// const reference (ModeSlices), and sees nothing else of the Job.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "extshuffle/dataset/dataset_options.hpp"
#include "extshuffle/ioperm/run_options.hpp"

namespace extshuffle::modes {

// shuf's generated inputs, printed one per line instead of reading a file:
// -e: the arguments themselves; -i LO-HI: the integers LO..HI.
struct ModeOptions {
  bool echo = false;
  std::vector<std::string> echo_items;
  bool integer_range = false;
  std::uint64_t range_low = 0, range_high = 0;  // HI may be 2^64 - 1: the range may hold 2^64 numbers
};

// What a mode reads of a Job: its slices, held by the Job, by reference.
struct ModeSlices {
  const ioperm::RunOptions& run;         // the permutation, the budget, scratch space, --dry-run
  const dataset::DatasetOptions& input;  // how -r's input is read, -r itself, which formats keep a header (-n 0),
                                         // and -z, which also ends -e's and -i's items
  const dataset::OutputOptions& output;  // -n: the first K records (-r: K draws)
  const ModeOptions& mode;               // -e, -i
};

}  // namespace extshuffle::modes
