// From a Job's options and an input's layout to what the walk is told
// (ioperm/shuffle_options.hpp): the one place the driver composes them.
#pragma once

#include "extshuffle/dataset/input_layout.hpp"
#include "extshuffle/ioperm/shuffle_options.hpp"
#include "extshuffle/job.hpp"

namespace extshuffle::driver {

inline ioperm::WalkOptions walk_options(const JobOptions& job, const dataset::InputLayout& layout) {
  return ioperm::WalkOptions{{layout.record_size, job.seed, job.constants, job.device, job.threads}, job.memory_bytes};
}

inline ioperm::TextOptions text_options(const JobOptions& job, const dataset::InputLayout& layout) {
  return ioperm::TextOptions{walk_options(job, layout), layout.syntax, job.skip_empty, layout.spooled};
}

}  // namespace extshuffle::driver
