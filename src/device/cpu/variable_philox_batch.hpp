// Vectorised evaluation of VariablePhilox over a run of consecutive indices.
#pragma once

#include <cstdint>

#include "extshuffle/core/variable_philox.hpp"

namespace extshuffle::device::cpu {

inline constexpr std::uint32_t kPhiloxBatch = 256;

// values[j] = f(first + j) for j < count <= kPhiloxBatch. Same results as
// VariablePhilox::operator(); AVX-512, AVX2 and portable versions, the best
// one chosen at run time, so the binary is portable (no -march=native).
// Padding lanes past `count` may evaluate indices beyond the domain; their
// values are discarded.
void evaluate_variable_philox(const core::VariablePhilox& f, std::uint64_t first,
                              std::uint32_t count, std::uint64_t* values);

// The implementations, for tests that check each one on this machine.
enum class PhiloxKernel { kPortable, kAvx2, kAvx512 };
bool kernel_supported(PhiloxKernel kernel);
void evaluate_variable_philox(const core::VariablePhilox& f, std::uint64_t first, std::uint32_t count,
                              std::uint64_t* values, PhiloxKernel kernel);

}  // namespace extshuffle::device::cpu
