// Vectorised evaluation of VariablePhilox over a run of consecutive indices.
#pragma once

#include <cstdint>

#include "extshuffle/core/variable_philox.hpp"

namespace extshuffle::device::cpu {

inline constexpr std::uint32_t kPhiloxBatch = 256;

// values[j] = f(first + j) for j < count <= kPhiloxBatch. Same results as
// VariablePhilox::operator(); compiled for AVX-512, AVX2 and a baseline, the
// best one chosen at run time (GCC target_clones), so the binary is portable.
void evaluate_variable_philox(const core::VariablePhilox& f, std::uint64_t first,
                              std::uint32_t count, std::uint64_t* values);

}  // namespace extshuffle::device::cpu
