// The addressable permutation (extshuffle/modes/addressable_permutation.hpp)
// against the independent oracle, which computes all N: any position, any
// stride, at every level count; and its inverse against its forward.
#include "extshuffle/modes/addressable_permutation.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "extshuffle/core/variable_philox_inverse.hpp"
#include "support/plan_oracle.hpp"

namespace extshuffle::modes::addressable_permutation_test {
namespace {

void expect_matches_oracle(std::uint64_t n, std::uint64_t seed, const core::PlanConstants& c) {
  const std::vector<std::uint64_t> order = testing::oracle_order(n, seed, c);
  AddressablePermutation permutation(seed, n, c);
  const std::string where = "n " + std::to_string(n) + " seed " + std::to_string(seed) + " L " +
                            std::to_string(c.leaf_records) + " F " + std::to_string(c.max_fanout) + " levels " +
                            std::to_string(core::plan_levels(n, c));
  std::vector<std::uint64_t> all(n);
  permutation.positions(0, 1, all);
  ASSERT_EQ(all, order) << where;
  // Strides and offsets, as a rank of a distributed sampler reads them.
  for (const std::uint64_t step : {2ull, 3ull, 8ull}) {
    for (std::uint64_t first = 0; first < std::min<std::uint64_t>(step, n); ++first) {
      std::vector<std::uint64_t> strided((n - first + step - 1) / step);
      permutation.positions(first, step, strided);
      for (std::size_t k = 0; k < strided.size(); ++k) ASSERT_EQ(strided[k], order[first + k * step]) << where;
    }
  }
  for (std::uint64_t j = 0; j < n; ++j) ASSERT_EQ(permutation.position_of(order[j]), j) << where << " j " << j;
}

TEST(AddressablePermutation, MatchesTheOracleAtEveryLevelCount) {
  // Tiny constants give 1 to 10 levels; odd ones short last chunks and
  // uneven buckets; L = 256 chunks whose domain is exactly L.
  for (const core::PlanConstants c : {core::PlanConstants{4, 2}, core::PlanConstants{3, 3}, core::PlanConstants{7, 5},
                                      core::PlanConstants{16, 4}, core::PlanConstants{256, 8}}) {
    for (const std::uint64_t n : {1ull, 2ull, 3ull, 5ull, 17ull, 100ull, 1000ull, 4097ull}) {
      if (n > 1000 && c.leaf_records < 16) continue;
      for (const std::uint64_t seed : {1ull, 18446744073709551615ull}) expect_matches_oracle(n, seed, c);
    }
  }
}

TEST(AddressablePermutation, MatchesTheOracleWithTheShippedConstants) {
  // Two levels at L = 2^20: full chunks (domain exactly L) and a short last one.
  const std::uint64_t n = (std::uint64_t{1} << 21) + 12345;
  const std::vector<std::uint64_t> order = testing::oracle_order(n, 9, core::kPlanV2);
  AddressablePermutation permutation(9, n, core::kPlanV2);
  std::vector<std::uint64_t> block(100000);
  for (const std::uint64_t first : {std::uint64_t{0}, std::uint64_t{1048000}, n - 100000}) {
    permutation.positions(first, 1, block);
    for (std::size_t k = 0; k < block.size(); ++k) ASSERT_EQ(block[k], order[first + k]) << first + k;
  }
  for (std::uint64_t j = 0; j < n; j += 99991) ASSERT_EQ(permutation.position_of(order[j]), j);
  ASSERT_EQ(permutation.position_of(order[n - 1]), n - 1);
}

TEST(AddressablePermutation, ThreeLevelsOfTheShippedPlanInvertEachOther) {
  // N = 2^31 + 5: three levels with L = 2^20 and F = 2^10 (the CLI test in
  // tests/python checks the forward direction against `extshuffle -i`).
  const std::uint64_t n = (std::uint64_t{1} << 31) + 5;
  ASSERT_EQ(core::plan_levels(n, core::kPlanV2), 3u);
  AddressablePermutation permutation(3, n, core::kPlanV2);
  std::vector<std::uint64_t> block(1000);
  for (const std::uint64_t first : {std::uint64_t{0}, n / 2, n - 1000}) {
    permutation.positions(first, 1, block);
    for (std::size_t k = 0; k < block.size(); k += 97) {
      ASSERT_LT(block[k], n);
      ASSERT_EQ(permutation.position_of(block[k]), first + k);
    }
  }
}

TEST(AddressablePermutation, RefusesPositionsPastTheEnd) {
  AddressablePermutation permutation(1, 10, core::PlanConstants{4, 2});
  std::vector<std::uint64_t> out(3);
  EXPECT_THROW(permutation.positions(8, 1, out), std::out_of_range);
  EXPECT_THROW(permutation.positions(0, 5, out), std::out_of_range);
  EXPECT_NO_THROW(permutation.positions(1, 4, out));
  EXPECT_THROW(permutation.position_of(10), std::out_of_range);
  EXPECT_THROW(AddressablePermutation(1, 10, core::PlanConstants{0, 2}), std::invalid_argument);
}

TEST(VariablePhiloxInverse, InvertsEveryWidth) {
  for (std::uint32_t bits = core::kMinDomainBits; bits <= 40; bits += 3) {
    const core::VariablePhilox f(bits, core::Stream(7, core::StreamAddress{}));
    for (std::uint64_t x = 0; x < 1000; ++x) {
      const std::uint64_t value = (x * 0x9E3779B97F4A7C15ull) & (f.domain_size() - 1);
      ASSERT_EQ(core::variable_philox_inverse(f, f(value)), value) << bits;
    }
  }
}

}  // namespace
}  // namespace extshuffle::modes::addressable_permutation_test
