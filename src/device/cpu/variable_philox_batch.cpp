#include "variable_philox_batch.hpp"

namespace extshuffle::device::cpu {

// Listing 1 with the lanes of a batch in the inner loop, so the compiler
// vectorises across indices. The 64x32-bit product M0 * state0 is split into
// a 32x32->64 multiply (vpmuludq) and a 32-bit low multiply (vpmulld), which
// gives the same hi and lo words as the scalar code.
__attribute__((target_clones("avx512f", "avx2", "default"))) void evaluate_variable_philox(
    const core::VariablePhilox& f, std::uint64_t first, std::uint32_t count,
    std::uint64_t* values) {
  constexpr std::uint32_t kM0Low = static_cast<std::uint32_t>(core::VariablePhilox::kM0);
  constexpr std::uint32_t kM0High = static_cast<std::uint32_t>(core::VariablePhilox::kM0 >> 32);
  const std::uint32_t left_bits = f.left_bits();
  const std::uint32_t right_bits = f.right_bits();
  const std::uint32_t left_mask = f.left_mask();
  const std::uint32_t right_mask = f.right_mask();
  const std::uint32_t odd_shift = right_bits - left_bits;

  alignas(64) std::uint32_t state0[kPhiloxBatch];
  alignas(64) std::uint32_t state1[kPhiloxBatch];
  for (std::uint32_t j = 0; j < count; ++j) {
    const std::uint64_t value = first + j;
    state0[j] = static_cast<std::uint32_t>(value >> right_bits);
    state1[j] = static_cast<std::uint32_t>(value) & right_mask;
  }
  const int rounds = f.rounds();
  for (int i = 0; i < rounds; ++i) {
    const std::uint32_t key = f.key(i);
    for (std::uint32_t j = 0; j < count; ++j) {
      const std::uint64_t low_product = std::uint64_t{kM0Low} * state0[j];
      const std::uint32_t hi = static_cast<std::uint32_t>(low_product >> 32) + kM0High * state0[j];
      std::uint32_t lo = static_cast<std::uint32_t>(low_product);
      lo = (lo << odd_shift) | (state1[j] >> left_bits);
      state0[j] = ((hi ^ key) ^ state1[j]) & left_mask;
      state1[j] = lo & right_mask;
    }
  }
  for (std::uint32_t j = 0; j < count; ++j) {
    values[j] = (std::uint64_t{state0[j]} << right_bits) | state1[j];
  }
}

}  // namespace extshuffle::device::cpu
