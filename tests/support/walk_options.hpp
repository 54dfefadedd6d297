// The walk's options as the walk's tests give them: records of
// `record_size` bytes under `seed` and `constants`, within `memory_bytes`,
// on `threads` threads of the CPU; the rest of the run's part left as a
// Job leaves it by default.
#pragma once

#include <cstddef>
#include <cstdint>

#include "extshuffle/ioperm/shuffle_options.hpp"

namespace extshuffle::testing {

inline ioperm::WalkOptions walk_options(std::size_t record_size, std::uint64_t seed,
                                        const core::PlanConstants& constants, std::uint64_t memory_bytes, int threads,
                                        device::Device device = device::Device::kCpu) {
  ioperm::WalkOptions options;
  options.record_size = record_size;
  options.run.seed = seed;
  options.run.constants = constants;
  options.run.memory_bytes = memory_bytes;
  options.run.threads = threads;
  options.run.device = device;
  return options;
}

}  // namespace extshuffle::testing
