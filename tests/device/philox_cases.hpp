// The inputs on which every restated VariablePhilox (the SIMD CPU kernels,
// the CUDA kernel helpers compiled for the host) is compared with core's
// operator(), the one definition. Shared by variable_philox_batch_test.cpp
// and cuda_kernel_host_test.cpp (the CUDA kernels' helpers), so both check the
// same cases. Plain C++ on core only: no gtest, no CUDA.
#pragma once

#include <algorithm>
#include <cstdint>
#include <initializer_list>

#include "extshuffle/core/variable_philox.hpp"

namespace extshuffle::testing {

// Every index of every domain up to 2^kExhaustiveBits is visited; wider
// domains (up to core::kMaxDomainBits) are sampled. 2^18 keeps the whole
// exhaustive sweep near 2^19 evaluations per key: about 0.3 s per kernel in
// Release (measured here), a few seconds under ASan.
inline constexpr std::uint32_t kExhaustiveBits = 18;
// Sampled batches per key at each wider width, besides the first and the
// last batch of the domain (where carries into the halves' top bits occur).
inline constexpr int kSampledBatches = 256;

// Batch lengths cycled through, so that full vectors, partial vectors and
// single lanes all occur (each is clipped to the caller's largest batch).
inline constexpr std::uint32_t kBatchCounts[] = {256, 1, 17, 129, 255, 16, 15, 64, 3, 200};

// splitmix64: a fixed, portable sequence for the sampled positions.
inline std::uint64_t next_sample(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Calls visit(f, first, count) for runs [first, first + count) inside f's
// domain, count in [1, max_batch]:
//  - keys: four seeds at the permutation's 24 rounds at every width, and
//    round counts 0, 1, 7 and 32 (the kernels loop f.rounds() times) at the
//    exhaustive widths;
//  - widths 1 .. kExhaustiveBits: every index, in consecutive runs;
//  - wider widths up to 62: the first and last run and kSampledBatches runs
//    at positions drawn from a fixed sequence.
// Deterministic: the same cases on every run and machine.
template <class Visit>
void for_each_philox_run(std::uint32_t max_batch, Visit&& visit) {
  struct Key {
    std::uint64_t seed;
    int rounds;
    std::uint32_t max_bits;
  };
  const std::uint64_t kWide = 0xFFFFFFFFFFFFFFFFull;
  const Key keys[] = {{1, core::kVariablePhiloxRounds, core::kMaxDomainBits},
                      {2, core::kVariablePhiloxRounds, core::kMaxDomainBits},
                      {0x9E3779B97F4A7C15ull, core::kVariablePhiloxRounds, core::kMaxDomainBits},
                      {kWide, core::kVariablePhiloxRounds, core::kMaxDomainBits},
                      {3, 0, kExhaustiveBits},
                      {3, 1, kExhaustiveBits},
                      {3, 7, kExhaustiveBits},
                      {3, core::kVariablePhiloxMaxRounds, kExhaustiveBits}};
  std::uint64_t sample_state = 0x5EED;
  std::size_t count_index = 0;
  auto next_count = [&] {
    const std::uint32_t count = kBatchCounts[count_index++ % std::size(kBatchCounts)];
    return std::min(count, max_batch);
  };
  for (const Key& key : keys) {
    for (std::uint32_t bits = 1; bits <= key.max_bits; ++bits) {
      const core::Stream stream(key.seed,
                                core::StreamAddress{core::NodeId{0, bits}, core::Purpose::kLab, 0});
      const core::VariablePhilox f(bits, stream, key.rounds);
      const std::uint64_t domain = f.domain_size();
      if (bits <= kExhaustiveBits) {
        for (std::uint64_t first = 0; first < domain;) {
          const auto count = static_cast<std::uint32_t>(std::min<std::uint64_t>(next_count(), domain - first));
          visit(f, first, count);
          first += count;
        }
        continue;
      }
      visit(f, std::uint64_t{0}, max_batch);
      visit(f, domain - max_batch, max_batch);
      for (int s = 0; s < kSampledBatches; ++s) {
        const std::uint32_t count = next_count();
        visit(f, next_sample(sample_state) % (domain - count + 1), count);
      }
    }
  }
}

}  // namespace extshuffle::testing
