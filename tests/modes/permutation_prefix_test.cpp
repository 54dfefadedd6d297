// The first K positions of P(seed, N) computed backwards through the plan
// (src/modes/permutation_prefix.hpp) against the independent oracle, which
// computes all N: every K, every level count, small and shipped constants.
#include "modes/permutation_prefix.hpp"

#include <gtest/gtest.h>
#include <time.h>

#include <algorithm>
#include <set>
#include <vector>

#include "support/plan_oracle.hpp"

namespace extshuffle::modes::permutation_prefix_test {
namespace {

void expect_prefix_matches_oracle(std::uint64_t n, std::uint64_t seed, const core::PlanConstants& c) {
  const std::vector<std::uint64_t> order = testing::oracle_order(n, seed, c);
  for (const std::uint64_t k : {std::uint64_t{1}, std::uint64_t{2}, std::uint64_t{7}, n / 3, n + 5}) {
    if (k == 0) continue;
    const std::vector<std::uint64_t> prefix = permutation_prefix(seed, n, k, c);
    ASSERT_EQ(prefix.size(), std::min(k, n)) << "n " << n << " k " << k;
    EXPECT_TRUE(std::equal(prefix.begin(), prefix.end(), order.begin()))
        << "n " << n << " k " << k << " seed " << seed << " L " << c.leaf_records << " F " << c.max_fanout
        << " levels " << core::plan_levels(n, c);
  }
}

TEST(PermutationPrefix, MatchesTheOracleAtEveryLevelCount) {
  // Tiny constants give 1 to 10 plan levels and deep matrix trees on a few
  // thousand records; odd ones give short last chunks and uneven buckets.
  for (const core::PlanConstants c : {core::PlanConstants{4, 2}, core::PlanConstants{3, 3}, core::PlanConstants{7, 5},
                                      core::PlanConstants{16, 4}, core::PlanConstants{256, 8}}) {
    for (const std::uint64_t n : {1ull, 2ull, 3ull, 5ull, 17ull, 100ull, 1000ull, 4097ull}) {
      if (n > 1000 && c.leaf_records < 16) continue;  // 10 levels at 1000 already
      for (const std::uint64_t seed : {1ull, 18446744073709551615ull}) expect_prefix_matches_oracle(n, seed, c);
    }
  }
}

TEST(PermutationPrefix, MatchesTheOracleWithTheShippedConstants) {
  // One split of two buckets at L = 2^20: a full chunk (domain exactly L)
  // and a short last one.
  expect_prefix_matches_oracle((std::uint64_t{1} << 20) + 12345, 9, core::kPlanV2);
}

TEST(PermutationPrefix, EmptyRequestsGiveNothing) {
  EXPECT_TRUE(permutation_prefix(1, 0, 5, core::kPlanV2).empty());
  EXPECT_TRUE(permutation_prefix(1, 5, 0, core::kPlanV2).empty());
}

// The largest N permutation version 2 addresses (2^32 chunks of 2^20): a few
// positions in well under a second of CPU time (which a busy machine does
// not stretch as it does the wall clock), distinct and inside the range.
TEST(PermutationPrefix, LargestPlanIsCheapForSmallK) {
  const std::uint64_t n = std::uint64_t{1} << 52;
  const auto cpu_seconds = [] {
    timespec now{};
    ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
    return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
  };
  const double start = cpu_seconds();
  const std::vector<std::uint64_t> prefix = permutation_prefix(5, n, 100, core::kPlanV2);
  const double seconds = cpu_seconds() - start;
  ASSERT_EQ(prefix.size(), 100u);
  EXPECT_EQ(std::set<std::uint64_t>(prefix.begin(), prefix.end()).size(), 100u);
  for (const std::uint64_t x : prefix) EXPECT_LT(x, n);
  EXPECT_LT(seconds, 5.0);
  // The same positions again, and a longer prefix starts with them.
  EXPECT_EQ(permutation_prefix(5, n, 100, core::kPlanV2), prefix);
  const auto longer = permutation_prefix(5, n, 150, core::kPlanV2);
  EXPECT_TRUE(std::equal(prefix.begin(), prefix.end(), longer.begin()));
  EXPECT_THROW(permutation_prefix(5, n + 1, 1, core::kPlanV2), std::invalid_argument);
}

TEST(PermutationPrefix, CostEstimateGrowsWithKNotN) {
  EXPECT_LT(permutation_prefix_draws(std::uint64_t{1} << 52, 10, core::kPlanV2), 2000.0);
  EXPECT_GT(permutation_prefix_draws(std::uint64_t{1} << 40, 1 << 20, core::kPlanV2),
            permutation_prefix_draws(std::uint64_t{1} << 40, 1 << 10, core::kPlanV2));
}

}  // namespace
}  // namespace extshuffle::modes::permutation_prefix_test
