// The inverse of VariablePhilox (Mitchell et al. 3.2: every round is
// invertible, which is why the network is a bijection). It lets a record be
// traced forward through a shuffle without a pass over the domain: the
// addressable permutation's position() (modes/addressable_permutation.hpp)
// and tools/permlab's chi-square runs at any domain width.
#pragma once

#include <cstdint>

#include "extshuffle/core/variable_philox.hpp"

namespace extshuffle::core {

namespace philox_inverse_detail {
// M0^-1 mod 2^32 by Newton's iteration (each step doubles the correct bits).
constexpr std::uint32_t inverse_mod_2_32(std::uint32_t a) {
  std::uint32_t x = a;  // correct to 3 bits for odd a
  for (int i = 0; i < 5; ++i) x *= 2 - a * x;
  return x;
}
inline constexpr std::uint32_t kM0Low = static_cast<std::uint32_t>(VariablePhilox::kM0);
inline constexpr std::uint32_t kM0LowInverse = inverse_mod_2_32(kM0Low);
static_assert(kM0Low * kM0LowInverse == 1u);
}  // namespace philox_inverse_detail

// f^-1(value) for value in [0, f.domain_size()); f(variable_philox_inverse(f, x)) == x.
inline std::uint64_t variable_philox_inverse(const VariablePhilox& f, std::uint64_t value) {
  const std::uint32_t left_bits = f.left_bits(), right_bits = f.right_bits();
  const std::uint32_t odd = right_bits - left_bits;  // 0 or 1: the bit G carries
  const std::uint32_t left_mask = f.left_mask(), right_mask = f.right_mask();
  std::uint32_t state0 = static_cast<std::uint32_t>(value >> right_bits);
  std::uint32_t state1 = static_cast<std::uint32_t>(value) & right_mask;
  // One round of Listing 1 maps (s0, s1) to
  //   s0' = (hi(M0 s0) ^ key ^ s1) & left_mask
  //   s1' = ((lo(M0 s0) << odd) | (s1 >> left_bits)) & right_mask.
  // s1' holds the low left_bits bits of lo(M0 s0), which give s0 back (M0 is
  // odd), and the odd bit of s1; then s0' gives the low bits of s1.
  for (int i = f.rounds() - 1; i >= 0; --i) {
    const std::uint32_t low_product = (state1 >> odd) & left_mask;
    const std::uint32_t s0 = (low_product * philox_inverse_detail::kM0LowInverse) & left_mask;
    const std::uint64_t product = VariablePhilox::kM0 * s0;
    const std::uint32_t hi = static_cast<std::uint32_t>(product >> 32);
    const std::uint32_t s1_low = (state0 ^ hi ^ f.key(i)) & left_mask;
    const std::uint32_t s1_high = odd ? (state1 & 1u) : 0u;
    state0 = s0;
    state1 = (s1_high << left_bits) | s1_low;
  }
  return (std::uint64_t{state0} << right_bits) | state1;
}

}  // namespace extshuffle::core
