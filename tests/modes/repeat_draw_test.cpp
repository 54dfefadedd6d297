// --repeat's draws (src/modes/repeat_run.hpp): each draw's index is uniform on
// [0, N) and independent of the draw before it, a function of (seed, j, N)
// alone. Statistical tests: each chi-square test fails a correct sampler with
// probability 1e-6 (the p-value threshold); the file holds 8 of them and one
// normal bound at 6 sd (1e-9), so a false failure of this file has
// probability below 1e-5.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "modes/repeat_run.hpp"
#include "support/statistics.hpp"

namespace extshuffle::modes::repeat_draw_test {
namespace {

constexpr double kAlpha = 1e-6;

// Counts of `draws` draws of indices in [0, n) binned into `bins` equal ranges.
std::vector<std::uint64_t> binned_counts(std::uint64_t seed, std::uint64_t n, std::uint64_t draws, std::uint64_t bins,
                                         std::uint64_t first_draw = 0) {
  std::vector<std::uint64_t> counts(bins);
  for (std::uint64_t j = first_draw; j < first_draw + draws; ++j) {
    const std::uint64_t x = repeat_draw(seed, j, n - 1);
    EXPECT_LT(x, n);
    counts[static_cast<std::uint64_t>(static_cast<unsigned __int128>(x) * bins / n)]++;
  }
  return counts;
}

TEST(RepeatDraw, IndicesAreUniformForSmallAndOddN) {
  for (const std::uint64_t n : {std::uint64_t{2}, std::uint64_t{7}, std::uint64_t{100}, std::uint64_t{1000}}) {
    const std::vector<std::uint64_t> counts = binned_counts(11, n, 200000, std::min<std::uint64_t>(n, 100));
    // Bins of equal size only when bins divide n: 2, 7, 100, 1000 all do for min(n, 100).
    const std::vector<double> p(counts.size(), 1.0 / static_cast<double>(counts.size()));
    const auto result = testing::pooled_chi_square(counts, p);
    EXPECT_GT(result.p_value, kAlpha) << "n " << n << " chi2 " << result.statistic << " dof " << result.dof;
  }
}

// A range of 2^40 + 3 and of all 2^64 numbers: the top of the range is
// reached as often as the bottom (64 bins of the value).
TEST(RepeatDraw, IndicesAreUniformOverHugeRanges) {
  for (const std::uint64_t last : {(std::uint64_t{1} << 40) + 2, UINT64_MAX}) {
    std::vector<std::uint64_t> counts(64);
    for (std::uint64_t j = 0; j < 100000; ++j) {
      const std::uint64_t x = repeat_draw(5, j, last);
      EXPECT_LE(x, last);
      counts[static_cast<std::uint64_t>(static_cast<unsigned __int128>(x) * 64 / (static_cast<unsigned __int128>(last) + 1))]++;
    }
    const std::vector<double> p(64, 1.0 / 64);
    const auto result = testing::pooled_chi_square(counts, p);
    EXPECT_GT(result.p_value, kAlpha) << "last " << last << " chi2 " << result.statistic;
  }
}

// Consecutive draws are independent: the 10 x 10 table of (draw j, draw j + 1).
TEST(RepeatDraw, ConsecutiveDrawsAreIndependent) {
  std::vector<std::uint64_t> pairs(100);
  std::uint64_t previous = repeat_draw(3, 0, 9);
  for (std::uint64_t j = 1; j <= 200000; ++j) {
    const std::uint64_t x = repeat_draw(3, j, 9);
    pairs[previous * 10 + x]++;
    previous = x;
  }
  const std::vector<double> p(100, 0.01);
  const auto result = testing::pooled_chi_square(pairs, p);
  EXPECT_GT(result.p_value, kAlpha) << "chi2 " << result.statistic;
}

// Draws past 2^32 (another node of the stream address) stay uniform, and
// seeds that differ in one bit give different sequences.
TEST(RepeatDraw, FarDrawsAndSeedsAreIndependent) {
  const std::vector<std::uint64_t> far = binned_counts(11, 50, 100000, 50, (std::uint64_t{1} << 32) - 50000);
  const std::vector<double> p(50, 0.02);
  EXPECT_GT(testing::pooled_chi_square(far, p).p_value, kAlpha);
  std::uint64_t same = 0;
  for (std::uint64_t j = 0; j < 10000; ++j) same += repeat_draw(1, j, 1) == repeat_draw(3, j, 1) ? 1 : 0;
  // Two independent fair coins agree half the time: 5000 +- 50; 6 sd is 1e-9.
  EXPECT_NEAR(static_cast<double>(same), 5000.0, 300.0);
}

TEST(RepeatDraw, IsAFunctionOfSeedDrawAndCount) {
  EXPECT_EQ(repeat_draw(9, 123, 999), repeat_draw(9, 123, 999));
  EXPECT_EQ(repeat_draw(9, 0, 0), 0u);  // one record: always it
}

}  // namespace
}  // namespace extshuffle::modes::repeat_draw_test
