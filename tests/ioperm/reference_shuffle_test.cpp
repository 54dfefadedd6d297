#include "extshuffle/ioperm/reference_shuffle.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "support/permutations.hpp"
#include "support/plan_oracle.hpp"
#include "support/statistics.hpp"

namespace extshuffle::ioperm::reference_shuffle_test {
namespace {

using core::PlanConstants;

std::vector<std::uint64_t> shuffled_indices(std::uint64_t n, std::uint64_t seed,
                                            const PlanConstants& c, std::size_t record_size = 8,
                                            int threads = 1) {
  const auto input = testing::numbered_records(n, record_size);
  std::vector<std::byte> output(input.size());
  shuffle_in_memory(input, output, record_size, seed, ReferenceOptions{c, device::Device::kCpu, threads});
  return testing::record_indices(output, record_size);
}

TEST(ReferenceExecutor, OutputIsAPermutationAcrossLevels) {
  for (const PlanConstants c : {PlanConstants{4, 2}, PlanConstants{16, 4}, core::kPlanV2}) {
    for (std::uint64_t n : {0ull, 1ull, 2ull, 3ull, 5ull, 17ull, 1000ull, 100003ull, (1ull << 20) + 1}) {
      // 2^20 + 1 records at L = 4, F = 2 are 19 levels and two thirds of the
      // test's time; 100003 records already take that plan through 15.
      if (c.leaf_records == 4 && n > 100003) continue;
      ASSERT_TRUE(testing::is_permutation_of_iota(shuffled_indices(n, 8, c)))
          << "n " << n << " L " << c.leaf_records << " F " << c.max_fanout;
    }
  }
  EXPECT_EQ(core::plan_levels(1000, PlanConstants{4, 2}), 9u);
}

// The in-RAM entry point against the independent oracle (support/plan_oracle.hpp),
// byte for byte, from one leaf to 9 levels, for several record sizes.
// Deterministic: false-failure rate 0.
TEST(ReferenceExecutor, MatchesTheOracle) {
  for (const PlanConstants c : {PlanConstants{4, 2}, PlanConstants{16, 4}, PlanConstants{64, 4}}) {
    for (std::uint64_t n : {0ull, 1ull, 2ull, 5ull, 17ull, 1000ull, 20011ull}) {
      for (std::size_t r : {1ul, 8ul, 12ul}) {
        const auto input = testing::numbered_records(n, r);
        std::vector<std::byte> output(input.size());
        shuffle_in_memory(input, output, r, 5, ReferenceOptions{c, device::Device::kCpu, 2});
        ASSERT_EQ(output, testing::oracle_shuffle(input, r, 5, c))
            << "n " << n << " r " << r << " L " << c.leaf_records << " F " << c.max_fanout;
      }
    }
  }
}

TEST(ReferenceExecutor, IdenticalForOneAndTwoThreads) {
  const PlanConstants c{64, 8};
  EXPECT_EQ(shuffled_indices(50000, 3, c, 12, 1), shuffled_indices(50000, 3, c, 12, 2));
  EXPECT_EQ(shuffled_indices(3000000, 3, core::kPlanV2, 8, 1),
            shuffled_indices(3000000, 3, core::kPlanV2, 8, 2));
}

TEST(ReferenceExecutor, SeedChangesThePermutation) {
  EXPECT_NE(shuffled_indices(1000, 1, core::kPlanV2), shuffled_indices(1000, 2, core::kPlanV2));
}

// Chi-square over all n! orders of the whole plan with 3 levels.
// n = 4 with L = 1, F = 2: 4 -> 2 x 2 -> 4 x 1. n = 5 with L = 2, F = 2:
// 5 -> (3, 2) -> (2, 1). 1000 samples per order; threshold p < 1e-6 per test,
// false-failure rate 2e-6 for the two.
TEST(ReferenceExecutor, AllOrdersEquallyLikelyWithThreeLevels) {
  for (const auto& [n, c] : {std::pair{std::uint64_t{4}, PlanConstants{1, 2}},
                             std::pair{std::uint64_t{5}, PlanConstants{2, 2}}}) {
    ASSERT_EQ(core::plan_levels(n, c), 3u);
    const std::uint64_t orders = testing::factorial(n);
    std::vector<std::uint64_t> counts(orders, 0);
    const std::uint64_t samples = 1000 * orders;
    for (std::uint64_t seed = 0; seed < samples; ++seed) {
      ++counts[testing::permutation_rank(shuffled_indices(n, seed, c))];
    }
    const double stat = testing::chi_square_statistic(counts, std::vector<double>(orders, 1.0 / orders));
    EXPECT_GT(testing::chi_square_p_value(stat, orders - 1), 1e-6) << "n " << n << " chi2 " << stat;
  }
}

// Waechter et al.'s position matrix M_n (p_ij = P(record j ends at position i))
// for n = 1000 through 4 levels (L = 16, F = 4), S = 20000 shuffles.
// (a) Chi-square of the whole matrix, (n-1)^2 degrees of freedom: p < 1e-6
//     fails, false-failure rate 1e-6.
// (b) Bias B(M_n) = (1/n) sum |M(i,j) - 1/n| against its sampling noise under
//     uniformity, E[B] computed exactly from the binomial pmf; the sum of 10^6 nearly
//     independent cells has relative sd ~ 0.8 / 1000, so a 3% margin is > 30 sd:
//     false-failure rate negligible (< 1e-12).
TEST(ReferenceExecutor, PositionMatrixIsUniformForThousandRecords) {
  constexpr std::uint64_t n = 1000;
  constexpr std::uint64_t kShuffles = 20000;
  const PlanConstants c{16, 4};
  ASSERT_EQ(core::plan_levels(n, c), 4u);
  std::vector<std::uint32_t> counts(n * n, 0);
  for (std::uint64_t s = 0; s < kShuffles; ++s) {
    const auto order = shuffled_indices(n, 1000 + s, c, 8, 2);
    for (std::uint64_t i = 0; i < n; ++i) ++counts[i * n + order[i]];
  }
  const double expected = static_cast<double>(kShuffles) / n;
  double chi2 = 0, bias = 0;
  for (std::uint32_t k : counts) {
    chi2 += (k - expected) * (k - expected) / expected;
    bias += std::abs(static_cast<double>(k) / kShuffles - 1.0 / n);
  }
  bias /= n;
  // Exact E[B] under uniformity: n * E|X/S - 1/n| for X ~ Binomial(S, 1/n).
  const double p = 1.0 / n;
  double mean_abs = 0;
  for (std::uint64_t k = 0; k <= 10 * expected; ++k) {
    const double log_pmf = std::lgamma(kShuffles + 1.0) - std::lgamma(k + 1.0) -
                           std::lgamma(kShuffles - k + 1.0) + k * std::log(p) +
                           (kShuffles - k) * std::log1p(-p);
    mean_abs += std::abs(k - expected) * std::exp(log_pmf);
  }
  const double noise = n * mean_abs / kShuffles;
  EXPECT_GT(testing::chi_square_p_value(chi2, (n - 1) * (n - 1)), 1e-6) << "chi2 " << chi2;
  EXPECT_LT(bias, 1.03 * noise) << "B(M_n) " << bias << " vs noise " << noise;
}

}  // namespace
}  // namespace extshuffle::ioperm::reference_shuffle_test
