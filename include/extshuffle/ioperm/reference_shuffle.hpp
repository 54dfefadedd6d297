// The in-memory reference shuffle: runs the whole canonical plan with every
// node in RAM. It defines P(seed, N) operationally, so the walk
// and every back end are tested against it byte for byte.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "extshuffle/core/plan.hpp"
#include "extshuffle/device/shuffle_records.hpp"

namespace extshuffle::ioperm {

struct ReferenceOptions {
  core::PlanConstants constants = core::kPlanV2;
  device::Device device = device::Device::kCpu;
  int threads = 0;  // 0 = all cores; the result does not depend on it
};

// Writes the records of `input` (record_size bytes each) to `output` in the
// order of P(seed, N). input.size() must be a multiple of record_size and equal
// output.size(); they must not overlap. Memory: about 2 x input beyond the
// two spans (a copy of the input and a workspace). Throws std::invalid_argument on bad sizes.
void shuffle_in_memory(std::span<const std::byte> input, std::span<std::byte> output,
                       std::size_t record_size, std::uint64_t seed,
                       const ReferenceOptions& options = {});

}  // namespace extshuffle::ioperm
