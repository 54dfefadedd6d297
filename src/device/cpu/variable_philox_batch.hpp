// Vectorised evaluation of VariablePhilox over a run of consecutive indices.
#pragma once

#include <cstdint>
#include <vector>

#include "extshuffle/core/variable_philox.hpp"

namespace extshuffle::device::cpu {

inline constexpr std::uint32_t kPhiloxBatch = 256;

// values[j] = f(first + j) for j < count <= kPhiloxBatch. Same results as
// VariablePhilox::operator(); compiled through Highway for every SIMD target
// of the architecture, the best one this CPU runs chosen at the first call,
// so the binary is portable (no -march=native). Padding lanes past `count`
// may evaluate indices beyond the domain; their values are discarded.
void evaluate_variable_philox(const core::VariablePhilox& f, std::uint64_t first,
                              std::uint32_t count, std::uint64_t* values);

// values[j] = f(points[j]) for j < count <= kPhiloxBatch, at any points of
// the domain (the addressable permutation's scattered positions). `values`
// may be `points`: every point is read before any value is written.
void evaluate_variable_philox_at(const core::VariablePhilox& f, const std::uint64_t* points, std::uint32_t count,
                                 std::uint64_t* values);

// The targets compiled in that this CPU runs (Highway's HWY_* bits), best
// first, and their names: for tests that check each one here (through
// hwy::SetSupportedTargetsForTest) and for --stats.
std::vector<std::int64_t> philox_targets();
const char* philox_target_name(std::int64_t target);

}  // namespace extshuffle::device::cpu
