#include "extshuffle/core/variable_philox.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <vector>

#include "device/cpu/variable_philox_batch.hpp"
#include "support/permutations.hpp"

namespace extshuffle::core::variable_philox_test {
namespace {

Stream lab_stream(std::uint64_t seed, std::uint64_t index) {
  return Stream(seed, StreamAddress{NodeId{0, 0}, Purpose::kLab, index});
}

// Exhaustive: every width up to 24 bits (the minimum is 8) maps [0, 2^bits) onto itself.
TEST(VariablePhilox, IsABijectionAtEveryWidth) {
  for (std::uint32_t bits = 1; bits <= 24; ++bits) {
    const VariablePhilox f(bits, lab_stream(42, bits));
    const std::uint64_t size = f.domain_size();
    ASSERT_EQ(size, std::uint64_t{1} << bits);
    std::vector<bool> seen(size, false);
    for (std::uint64_t i = 0; i < size; ++i) {
      const std::uint64_t v = f(i);
      ASSERT_LT(v, size) << "bits " << bits;
      ASSERT_FALSE(seen[v]) << "bits " << bits << " value " << v << " hit twice";
      seen[v] = true;
    }
  }
}

// Listing 1 pinned: a change to the round function changes these values.
TEST(VariablePhilox, MatchesListingOneOnFixedKeys) {
  Stream keys = lab_stream(7, 0);
  const VariablePhilox f(20, keys);
  std::vector<std::uint64_t> values;
  for (std::uint64_t i = 0; i < 4; ++i) values.push_back(f(i));
  // Recompute Listing 1 independently, written out from the paper.
  Stream again = lab_stream(7, 0);
  std::uint32_t key[kVariablePhiloxRounds];
  for (auto& k : key) k = again.next_u32();
  for (std::uint64_t i = 0; i < 4; ++i) {
    const int left = 10, right = 10;
    std::uint32_t s0 = static_cast<std::uint32_t>(i >> right), s1 = static_cast<std::uint32_t>(i & 1023);
    for (int r = 0; r < kVariablePhiloxRounds; ++r) {
      const std::uint64_t product = 0xD2B74407B1CE6E93ull * s0;
      const std::uint32_t hi = static_cast<std::uint32_t>(product >> 32);
      std::uint32_t lo = static_cast<std::uint32_t>(product);
      lo = (lo << (right - left)) | s1 >> left;
      s0 = ((hi ^ key[r]) ^ s1) & 1023u;
      s1 = lo & 1023u;
    }
    EXPECT_EQ(values[i], (std::uint64_t{s0} << right) | s1);
  }
}

TEST(VariablePhilox, DomainWidthIsSmallestPowerOfTwoAboveMinimum) {
  EXPECT_EQ(domain_bits_for(0), kMinDomainBits);
  EXPECT_EQ(domain_bits_for(1), kMinDomainBits);
  EXPECT_EQ(domain_bits_for(256), 8u);
  EXPECT_EQ(domain_bits_for(257), 9u);
  EXPECT_EQ(domain_bits_for(std::uint64_t{1} << 30), 30u);
  EXPECT_EQ(domain_bits_for((std::uint64_t{1} << 30) + 1), 31u);
}

// The batch evaluator (the best SIMD target of this machine) is the same
// function as the scalar one, for every count (the tail lanes are padding);
// tests/device/variable_philox_batch_test.cpp checks every target.
TEST(VariablePhilox, BatchEvaluationMatchesScalar) {
  for (std::uint32_t bits : {4u, 5u, 9u, 16u, 17u, 20u, 31u, 32u, 33u, 47u, 62u}) {
    const VariablePhilox f(bits, lab_stream(3, bits));
    for (std::uint32_t count : {1u, 15u, 16u, 17u, 129u, device::cpu::kPhiloxBatch}) {
      const std::uint64_t first = bits > 9 ? f.domain_size() - 300 : 0;
      if (first + count > f.domain_size()) continue;
      std::uint64_t values[device::cpu::kPhiloxBatch];
      device::cpu::evaluate_variable_philox(f, first, count, values);
      for (std::uint32_t j = 0; j < count; ++j) ASSERT_EQ(values[j], f(first + j)) << "bits " << bits;
    }
  }
}

// At the minimum width, every n <= 8 reaches all n! orders after compaction.
// Deterministic given the fixed seeds; the coupon-collector expectation for
// 8! orders is ~4.3e5 draws, so 2.5e6 keys leave a margin of about 6x.
TEST(VariablePhilox, MinimumWidthReachesEveryOrderOfSmallN) {
  for (std::uint64_t n = 2; n <= 8; ++n) {
    const std::uint64_t orders = testing::factorial(n);
    std::vector<bool> seen(orders, false);
    std::uint64_t distinct = 0;
    const std::uint64_t tries = n <= 6 ? 100000 : 2500000;
    std::vector<std::uint64_t> order;
    for (std::uint64_t t = 0; t < tries && distinct < orders; ++t) {
      const VariablePhilox f = shuffle_bijection(n, StreamAddress{NodeId{0, 0}, Purpose::kLab, t}, n);
      order.clear();
      std::uint64_t values[device::cpu::kPhiloxBatch];
      for (std::uint64_t base = 0; base < f.domain_size(); base += device::cpu::kPhiloxBatch) {
        device::cpu::evaluate_variable_philox(f, base, device::cpu::kPhiloxBatch, values);
        for (std::uint64_t v : values) {
          if (v < n) order.push_back(v);
        }
      }
      const std::uint64_t rank = testing::permutation_rank(order);
      if (!seen[rank]) {
        seen[rank] = true;
        ++distinct;
      }
    }
    EXPECT_EQ(distinct, orders) << "n = " << n;
  }
}

}  // namespace
}  // namespace extshuffle::core::variable_philox_test
