// What shuf's modes (-r, -e, -i, -n 0) are told of a Job's options
// (docs/conventions.md, Rooms): the permutation, the budget and scratch
// space, the generated items, and how -r's input is read. The driver builds
// it from the Job's options (driver/mode_options.hpp); the modes see
// nothing else of them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "extshuffle/core/plan.hpp"
#include "extshuffle/dataset/dataset_options.hpp"
#include "extshuffle/device/shuffle_records.hpp"

namespace extshuffle::modes {

struct ModeOptions {
  std::uint64_t seed = 0;
  core::PlanConstants constants = core::kPlanV2;
  std::uint64_t memory_bytes = 0;  // hard cap on peak RSS, less a small fixed allowance
  std::string tmpdir;              // scratch directory; empty: $TMPDIR, else /tmp
  int threads = 1;                 // worker threads, positive; never changes the output
  device::Device device = device::Device::kCpu;
  std::uint64_t head_count = UINT64_MAX;  // -n: output only the first K records (-r: K draws)
  // shuf's generated inputs, printed one per line instead of reading a file:
  // -e: the arguments themselves; -i LO-HI: the integers LO..HI.
  bool echo = false;
  std::vector<std::string> echo_items;
  bool integer_range = false;
  std::uint64_t range_low = 0, range_high = 0;  // HI may be 2^64 - 1: the range may hold 2^64 numbers
  bool repeat = false;                          // -r: records drawn with replacement (repeat_run.hpp)
  bool dry_run = false;                         // describe the run, write nothing
  // How -r's input is read, which input formats keep a header (-n 0), and
  // -z, which also ends -e's and -i's items.
  dataset::DatasetOptions input;
};

}  // namespace extshuffle::modes
