// The sources of output ranges of a root of one or two levels, traced
// backwards through the plan (include/extshuffle/ioperm/output_sources.hpp),
// against the independent oracle, which computes all N: leaves, roots of 2
// to 20 chunks, full and short last chunks, chunk domains exactly L and
// wider, any range of output positions and any split of the domain into shares.
#include "extshuffle/ioperm/output_sources.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "support/plan_oracle.hpp"

namespace extshuffle::ioperm::output_sources_test {
namespace {

// L = 256: a full chunk's domain is exactly L (one evaluation a position);
// L = 100: every chunk is compacted. F above every chunk count: two levels.
const core::PlanConstants kExact{256, 64};
const core::PlanConstants kOdd{100, 64};

std::string where(std::uint64_t n, const core::PlanConstants& c) {
  return "n " + std::to_string(n) + " L " + std::to_string(c.leaf_records) + " chunks " +
         std::to_string(core::chunk_count(n, c));
}

void expect_ranges_match(std::uint64_t n, std::uint64_t seed, const core::PlanConstants& c) {
  const std::vector<std::uint64_t> order = testing::oracle_order(n, seed, c);
  const RootSources sources(seed, n, c);
  const std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges = {
      {0, n}, {n / 3, 2 * n / 3}, {n / 2, n / 2 + 1}, {n - 1, n}, {n - 1, n + 3}, {0, 1}, {n / 5, n / 5}};
  for (const auto& [first, end] : ranges) {
    const std::vector<std::uint64_t> got = sources.range_inputs(first, end);
    const std::uint64_t stop = std::min(end, n);
    ASSERT_EQ(got.size(), stop - first) << where(n, c) << " [" << first << ", " << end << ")";
    EXPECT_TRUE(std::equal(got.begin(), got.end(), order.begin() + static_cast<std::ptrdiff_t>(first)))
        << where(n, c) << " [" << first << ", " << end << ") seed " << seed;
  }
}

void expect_domain_shares_match(std::uint64_t n, std::uint64_t seed, const core::PlanConstants& c) {
  const std::vector<std::uint64_t> order = testing::oracle_order(n, seed, c);
  const RootSources sources(seed, n, c);
  for (int shares = 1; shares <= 7; ++shares) {
    std::vector<std::uint64_t> all;
    for (int s = 0; s < shares; ++s) {
      const std::uint64_t first = sources.domain_share(s, shares), end = sources.domain_share(s + 1, shares);
      ASSERT_LE(first, end) << where(n, c) << " share " << s << " of " << shares;
      const std::vector<std::uint64_t> part = sources.domain_inputs(first, end);
      all.insert(all.end(), part.begin(), part.end());
    }
    EXPECT_EQ(sources.domain_share(shares, shares), sources.domain_size());
    EXPECT_EQ(all, order) << where(n, c) << " in " << shares << " shares, seed " << seed;
  }
}

TEST(OutputSources, RangesMatchTheOracle) {
  for (const core::PlanConstants& c : {kExact, kOdd}) {
    const std::uint64_t l = c.leaf_records;
    for (const std::uint64_t n : std::vector<std::uint64_t>{1, 2, l / 2, l, l + 1, 2 * l, 2 * l + 7, 9 * l, 9 * l - 13, 20 * l,
                                  19 * l + 1}) {
      for (const std::uint64_t seed : {3ull, 18446744073709551615ull}) expect_ranges_match(n, seed, c);
    }
  }
}

TEST(OutputSources, DomainSharesMatchTheOracleInOrder) {
  for (const core::PlanConstants& c : {kExact, kOdd}) {
    const std::uint64_t l = c.leaf_records;
    for (const std::uint64_t n : std::vector<std::uint64_t>{1, 5, l, l + 1, 2 * l + 7, 9 * l, 20 * l - 1}) {
      expect_domain_shares_match(n, 7, c);
    }
  }
}

// Shares of the domain give near-equal shares of the output: 9 chunks of
// 256 on 4 shares. A share's count is the images below m_j of its domain
// points, a sample without replacement; the buckets' domains (512 points
// for 256 records) hold half records, so a share of ~1152 points gives 576
// records with a standard deviation under 12: 25% off is over 12 sigmas
// (false failure < 1e-30 for this fixed seed's or any seed's draw).
TEST(OutputSources, DomainSharesGiveNearEqualOutputs) {
  const std::uint64_t n = 9 * 256;
  const RootSources sources(5, n, kExact);
  for (int s = 0; s < 4; ++s) {
    const auto part = sources.domain_inputs(sources.domain_share(s, 4), sources.domain_share(s + 1, 4));
    EXPECT_NEAR(static_cast<double>(part.size()), n / 4.0, 0.25 * n / 4.0) << "share " << s;
  }
}

TEST(OutputSources, MoreThanTwoLevelsAreRefused) {
  EXPECT_THROW(RootSources(1, 100, core::PlanConstants{4, 2}), std::invalid_argument);
  EXPECT_NO_THROW(RootSources(1, 0, kOdd));
  EXPECT_TRUE(RootSources(1, 0, kOdd).range_inputs(0, 5).empty());
}

}  // namespace
}  // namespace extshuffle::ioperm::output_sources_test
