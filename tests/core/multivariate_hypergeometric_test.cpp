// multivariate_hypergeometric.hpp: Gustedt's MultiVarHyp, the draw behind
// every split of the communication matrix.
#include "extshuffle/core/multivariate_hypergeometric.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "support/hypergeometric_pmf.hpp"
#include "support/statistics.hpp"

// False-failure budget of this file: MarginalsAreHypergeometric makes 3
// chi-square tests at p < 1e-6 each, so the file fails by chance with
// probability < 3e-6. All samples come from fixed seeds.

namespace extshuffle::core::multivariate_hypergeometric_test {
namespace {

constexpr double kAlpha = 1e-6;

std::uint64_t sum(std::span<const std::uint64_t> v) { return std::accumulate(v.begin(), v.end(), std::uint64_t{0}); }

TEST(MultivariateHypergeometric, SumsAndBoundsAreExact) {
  Stream s(3, StreamAddress{NodeId{0, 0}, Purpose::kLab, 1});
  for (int t = 0; t < 3000; ++t) {
    const std::size_t colours = 1 + s.next_below(12);
    std::vector<std::uint64_t> counts(colours), out(colours);
    // Small, zero and huge colours (up to 2^59 each, total < 2^63).
    const int scale = static_cast<int>(s.next_below(3));
    for (auto& count : counts) {
      count = s.next_below(4) == 0 ? 0 : s.next_below(scale == 0 ? 20 : scale == 1 ? 100000 : std::uint64_t{1} << 59);
    }
    const std::uint64_t total = sum(counts);
    const std::uint64_t draws = t % 7 == 0 ? total : t % 7 == 1 ? 0 : s.next_below(total + 1);
    multivariate_hypergeometric(draws, counts, out, s);
    ASSERT_EQ(sum(out), draws);
    for (std::size_t j = 0; j < colours; ++j) ASSERT_LE(out[j], counts[j]);
    if (draws == total) {
      EXPECT_EQ(out, counts);
    }
  }
}

TEST(MultivariateHypergeometric, RejectsImpossibleDraws) {
  Stream s(3, StreamAddress{NodeId{0, 0}, Purpose::kLab, 2});
  std::vector<std::uint64_t> counts{3, 4, 5}, out(3, 77), short_out(2);
  EXPECT_THROW(multivariate_hypergeometric(13, counts, out, s), std::invalid_argument);
  EXPECT_EQ(out, std::vector<std::uint64_t>(3, 77));
  EXPECT_THROW(multivariate_hypergeometric(1, counts, short_out, s), std::invalid_argument);
  std::vector<std::uint64_t> huge{std::uint64_t{1} << 62, std::uint64_t{1} << 62, 1}, huge_out(3);
  EXPECT_THROW(multivariate_hypergeometric(1, huge, huge_out, s), std::invalid_argument);
  std::vector<std::uint64_t> none, none_out;
  EXPECT_NO_THROW(multivariate_hypergeometric(0, none, none_out, s));
  EXPECT_THROW(multivariate_hypergeometric(1, none, none_out, s), std::invalid_argument);
}

// out[j] ~ h(draws, c_j, total - c_j) for the first, a middle and the last
// colour (the last is what is left after the others). 40000 draws of 30 from
// {5, 0, 17, 3, 40, 9}; 3 chi-square tests, p < 1e-6 each.
TEST(MultivariateHypergeometric, MarginalsAreHypergeometric) {
  Stream s(4, StreamAddress{NodeId{0, 0}, Purpose::kLab, 3});
  const std::vector<std::uint64_t> counts{5, 0, 17, 3, 40, 9};
  const std::uint64_t total = sum(counts), draws = 30;
  std::vector<std::uint64_t> out(counts.size());
  std::vector<std::vector<std::uint64_t>> marginal(counts.size());
  for (std::size_t j = 0; j < counts.size(); ++j) marginal[j].assign(counts[j] + 1, 0);
  for (int t = 0; t < 40000; ++t) {
    multivariate_hypergeometric(draws, counts, out, s);
    for (std::size_t j = 0; j < counts.size(); ++j) ++marginal[j][out[j]];
  }
  for (std::size_t j : {std::size_t{0}, std::size_t{2}, std::size_t{5}}) {
    const auto r = testing::pooled_chi_square(marginal[j], testing::hypergeometric_pmf(draws, counts[j], total - counts[j]));
    EXPECT_GT(r.p_value, kAlpha) << "colour " << j << " chi2 " << r.statistic << " dof " << r.dof;
  }
  EXPECT_EQ(marginal[1][0], 40000u);
}

}  // namespace
}  // namespace extshuffle::core::multivariate_hypergeometric_test
