// What every executor needs to know to run the canonical plan on records.
#pragma once

#include <cstddef>
#include <cstdint>

#include "extshuffle/core/plan.hpp"
#include "extshuffle/device/shuffle_records.hpp"

namespace extshuffle::driver {

struct ShuffleOptions {
  std::size_t record_size = 0;
  std::uint64_t seed = 0;
  core::PlanConstants constants = core::kPlanV2;
  device::Device device = device::Device::kCpu;
  int threads = 0;  // 0 = all cores; never changes the output
};

}  // namespace extshuffle::driver
