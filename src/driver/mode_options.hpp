// From a Job's options to what shuf's modes are told (modes/mode_options.hpp):
// the one place the driver composes them.
#pragma once

#include "extshuffle/driver/job_slices.hpp"
#include "extshuffle/job.hpp"
#include "modes/mode_options.hpp"

namespace extshuffle::driver {

inline modes::ModeOptions mode_options(const JobOptions& options) {
  modes::ModeOptions mode;
  mode.seed = options.seed;
  mode.constants = options.constants;
  mode.memory_bytes = options.memory_bytes;
  mode.tmpdir = options.tmpdir;
  mode.threads = options.threads;
  mode.device = options.device;
  mode.head_count = options.head_count;
  mode.echo = options.echo;
  mode.echo_items = options.echo_items;
  mode.integer_range = options.integer_range;
  mode.range_low = options.range_low;
  mode.range_high = options.range_high;
  mode.repeat = options.repeat;
  mode.dry_run = options.dry_run;
  mode.input = dataset_options(options);
  return mode;
}

}  // namespace extshuffle::driver
