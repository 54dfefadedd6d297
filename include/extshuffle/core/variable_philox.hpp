// VariablePhilox: a keyed pseudo-random bijection on [0, 2^bits).
//
// Mitchell et al., "Bandwidth-optimal random shuffling for GPUs", section 3.3
// and Listing 1, reproduced exactly: a Philox-style Feistel network whose two
// halves differ by at most one bit (the odd bit is carried through G), so it
// is invertible, hence a bijection, for every power-of-two domain. 24 rounds
// is the paper's recommendation (on a 2^4 domain fewer than about 22 fail its
// chi-square test at n = 5; on our minimum domain 2^8, 9 or fewer fail);
// docs/quality.md reproduces and extends that finding with tools/permlab.
#pragma once

#include <cstdint>

#include "extshuffle/core/host_device.hpp"
#include "extshuffle/core/stream.hpp"

namespace extshuffle::core {

inline constexpr int kVariablePhiloxRounds = 24;  // permutation versions 1 and 2
inline constexpr int kVariablePhiloxMaxRounds = 32;

// Smallest domain width used for any n. Part of versions 1 and 2. With halves of
// one or two bits the 24-round network mixes poorly: tools/permlab measured
// the orders of 5 records on domains 2^4 and 2^5 as non-uniform with 10^7
// samples (chi-square p ~ 1e-6 and 1e-36), while 2^6 and every wider domain
// passed (docs/quality.md, "Beyond the paper"). 2^8 keeps a margin above the
// smallest passing width; it costs at most 256 evaluations for a tiny leaf
// or the short last chunk of a file. tests/core/variable_philox_test.cpp
// checks that every n <= 8 reaches all n! orders at this width.
inline constexpr std::uint32_t kMinDomainBits = 8;
inline constexpr std::uint32_t kMaxDomainBits = 62;

// Width of the power-of-two domain used to shuffle n records: the smallest
// 2^bits >= n, but at least 2^kMinDomainBits.
EXTSHUFFLE_HOST_DEVICE inline std::uint32_t domain_bits_for(std::uint64_t n) {
  std::uint32_t bits = kMinDomainBits;
  while (bits < kMaxDomainBits && (std::uint64_t{1} << bits) < n) ++bits;
  return bits;
}

class VariablePhilox {
 public:
  static constexpr std::uint64_t kM0 = 0xD2B74407B1CE6E93ull;

  // The widths and masks of the two Feistel halves (Listing 1's L_BITS,
  // R_BITS and their masks). Plain data with no default member initialisers,
  // so CUDA kernels can keep it in shared memory next to the round keys.
  struct Halves {
    std::uint32_t left_bits;
    std::uint32_t right_bits;
    std::uint32_t left_mask;
    std::uint32_t right_mask;
  };

  // The one definition of Listing 1's steps, host and device: operator()
  // below and the CUDA kernels (src/device/cuda/) call these, so the GPU
  // cannot drift from the CPU. (The SIMD CPU kernels restate the round in
  // vector intrinsics; tests/device/variable_philox_batch_test.cpp checks
  // them against operator().) Pure register arithmetic, no allocation.
  //
  // split: the halves of domain index `value` (< 2^(left_bits + right_bits)).
  EXTSHUFFLE_HOST_DEVICE static void split(const Halves& h, std::uint64_t value,
                                           std::uint32_t& state0, std::uint32_t& state1) {
    state0 = static_cast<std::uint32_t>(value >> h.right_bits);
    state1 = static_cast<std::uint32_t>(value & h.right_mask);
  }
  // round: one Feistel round with round key `key`, in place.
  EXTSHUFFLE_HOST_DEVICE static void round(const Halves& h, std::uint32_t key,
                                           std::uint32_t& state0, std::uint32_t& state1) {
    const std::uint64_t product = kM0 * state0;  // mulhilo(M0, state[0], hi)
    const std::uint32_t hi = static_cast<std::uint32_t>(product >> 32);
    std::uint32_t lo = static_cast<std::uint32_t>(product);
    lo = (lo << (h.right_bits - h.left_bits)) | state1 >> h.left_bits;
    state0 = ((hi ^ key) ^ state1) & h.left_mask;
    state1 = lo & h.right_mask;
  }
  // join: the domain index whose halves are (state0, state1).
  EXTSHUFFLE_HOST_DEVICE static std::uint64_t join(const Halves& h, std::uint32_t state0,
                                                   std::uint32_t state1) {
    return (std::uint64_t{state0} << h.right_bits) | std::uint64_t{state1};
  }

  VariablePhilox() = default;

  // Round keys are the first `rounds` words of the given stream.
  EXTSHUFFLE_HOST_DEVICE VariablePhilox(std::uint32_t domain_bits, Stream keys,
                                        int rounds = kVariablePhiloxRounds)
      : rounds_(rounds) {
    left_bits_ = domain_bits / 2;
    right_bits_ = domain_bits - left_bits_;
    left_mask_ = (std::uint32_t{1} << left_bits_) - 1;
    right_mask_ = static_cast<std::uint32_t>((std::uint64_t{1} << right_bits_) - 1);
    for (int i = 0; i < rounds_; ++i) keys_[i] = keys.next_u32();
  }

  EXTSHUFFLE_HOST_DEVICE std::uint64_t domain_size() const {
    return std::uint64_t{1} << (left_bits_ + right_bits_);
  }
  EXTSHUFFLE_HOST_DEVICE std::uint32_t domain_bits() const { return left_bits_ + right_bits_; }
  EXTSHUFFLE_HOST_DEVICE int rounds() const { return rounds_; }
  EXTSHUFFLE_HOST_DEVICE std::uint32_t key(int round) const { return keys_[round]; }
  EXTSHUFFLE_HOST_DEVICE std::uint32_t left_bits() const { return left_bits_; }
  EXTSHUFFLE_HOST_DEVICE std::uint32_t right_bits() const { return right_bits_; }
  EXTSHUFFLE_HOST_DEVICE std::uint32_t left_mask() const { return left_mask_; }
  EXTSHUFFLE_HOST_DEVICE std::uint32_t right_mask() const { return right_mask_; }
  EXTSHUFFLE_HOST_DEVICE Halves halves() const {
    return Halves{left_bits_, right_bits_, left_mask_, right_mask_};
  }

  // Listing 1 of the paper. `value` must lie in [0, domain_size()).
  EXTSHUFFLE_HOST_DEVICE std::uint64_t operator()(std::uint64_t value) const {
    const Halves h = halves();
    std::uint32_t state0 = 0;
    std::uint32_t state1 = 0;
    split(h, value, state0, state1);
    for (int i = 0; i < rounds_; ++i) round(h, keys_[i], state0, state1);
    return join(h, state0, state1);
  }

 private:
  std::uint32_t keys_[kVariablePhiloxMaxRounds] = {};
  int rounds_ = kVariablePhiloxRounds;
  std::uint32_t left_bits_ = 0;
  std::uint32_t right_bits_ = 0;
  std::uint32_t left_mask_ = 0;
  std::uint32_t right_mask_ = 0;
};

// The bijection that shuffles n records addressed by `address` under `seed`.
EXTSHUFFLE_HOST_DEVICE inline VariablePhilox shuffle_bijection(
    std::uint64_t seed, const StreamAddress& address, std::uint64_t n,
    int rounds = kVariablePhiloxRounds) {
  return VariablePhilox(domain_bits_for(n), Stream(seed, address), rounds);
}

}  // namespace extshuffle::core
