#include "extshuffle/core/hypergeometric.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "extshuffle/core/log_factorial.hpp"
#include "support/statistics.hpp"

// False-failure budget of this file. Every statistical check rejects at
// p < 1e-6 (chi-square p-values, or two-sided normal z-tests at |z| > 4.89):
//   MatchesExactPmfOnSmallUrns                14 chi-square tests
//   BothRegimesMatchExactPmf                  18 chi-square tests
//   MatchesExactPmfOnHugeUrnsWithShortSupport  4 chi-square tests
//   MeanVarianceAndLowBitsAtSixtyFourBits     11 z-tests + 4 chi-square tests
// 51 checks, so the file fails by chance with probability < 5.1e-5. All samples come from
// Purpose::kLab streams with fixed seeds, so a given build is deterministic:
// a failure repeats until the code or the seed changes.

namespace extshuffle::core::hypergeometric_test {
namespace {

constexpr std::uint64_t kSeed = 0x5eed'4e11'0c0f'fee5ull;
constexpr double kAlpha = 1e-6;

Stream lab_stream(std::uint64_t test_id, std::uint64_t index = 0) {
  return Stream(kSeed, StreamAddress{NodeId{7, test_id}, Purpose::kLab, index});
}

// ---------------------------------------------------------------------------
// log_factorial.hpp

// log(x!) - log(y!) for x > y as sum_{y < i <= x} log(i) in long double with
// Kahan summation: independent of the Stirling series, error ~ (x - y) * 1e-18.
long double reference_log_factorial_difference(std::uint64_t x, std::uint64_t y) {
  long double sum = 0, compensation = 0;
  for (std::uint64_t i = y + 1; i <= x; ++i) {
    const long double term = std::log(static_cast<long double>(i)) - compensation;
    const long double next = sum + term;
    compensation = (next - sum) - term;
    sum = next;
  }
  return sum;
}

TEST(LogFactorial, MatchesLgammaAndStirlingJoinsTheTable) {
  for (std::uint64_t x = 0; x < 1000; ++x) {
    const double expected = static_cast<double>(std::lgamma(static_cast<long double>(x) + 1));
    EXPECT_NEAR(log_factorial(x), expected, 1e-13 * std::max(1.0, expected)) << x;
  }
  EXPECT_EQ(log_factorial(0), 0.0);
  EXPECT_EQ(log_factorial(1), 0.0);
  EXPECT_NEAR(log_factorial(256) - log_factorial(255), std::log(256.0), 1e-12);
}

// The difference form keeps ~1e-9 absolute precision near 2^40 and ~1e-8
// near 2^62, where log(x!) ~ 3e13 and 2e20; the remainder (without d log z)
// is precise to ~1e-15.
TEST(LogFactorial, DifferenceIsPreciseForHugeCloseArguments) {
  struct Case {
    std::uint64_t x, d;
    double tolerance;
  };
  const std::uint64_t k40 = std::uint64_t{1} << 40, k62 = std::uint64_t{1} << 62;
  for (const Case c : {Case{k40, 1, 1e-12}, Case{k40 + 12345, 7, 1e-12}, Case{k40, 1000, 1e-11},
                       Case{k40 - 5, 100000, 1e-9}, Case{k62, 3, 1e-12}, Case{k62 + 999, 1000, 1e-10},
                       Case{1000, 700, 1e-11}, Case{300, 60, 1e-11}}) {
    const std::uint64_t y = c.x - c.d;
    const long double reference = reference_log_factorial_difference(c.x, y);
    EXPECT_NEAR(log_factorial_difference(c.x, y), static_cast<double>(reference), c.tolerance) << c.x << " " << y;
    EXPECT_NEAR(log_factorial_difference(y, c.x), -static_cast<double>(reference), c.tolerance) << c.x << " " << y;
    // The remainder leaves out d log(x + 1) (resp. -d log(y + 1)).
    const long double rem_xy = reference - static_cast<long double>(c.d) * std::log(static_cast<long double>(c.x) + 1);
    const long double rem_yx = -reference + static_cast<long double>(c.d) * std::log(static_cast<long double>(y) + 1);
    // Below 256 the remainder falls back to table/Stirling values of size ~1e3;
    // the long double reference itself is good to ~d * 3e-18 only.
    const double rem_tolerance = (y < detail::kLogFactorialTableSize ? 1e-12 : 1e-14) +
                                 1e-15 * static_cast<double>(std::fabs(rem_xy)) + 3e-18 * static_cast<double>(c.d);
    EXPECT_NEAR(log_factorial_difference_remainder(c.x, y), static_cast<double>(rem_xy), rem_tolerance) << c.x;
    EXPECT_NEAR(log_factorial_difference_remainder(y, c.x), static_cast<double>(rem_yx), rem_tolerance) << c.x;
  }
  EXPECT_EQ(log_factorial_difference(k40, k40), 0.0);
  // Far-apart arguments: plain difference of the two values, relative precision.
  EXPECT_NEAR(log_factorial_difference(k40, 3) / (log_factorial(k40) - log_factorial(3)), 1.0, 1e-14);
}

// ---------------------------------------------------------------------------
// hypergeometric.hpp: exact values and errors

TEST(Hypergeometric, EdgeCasesAreExactAndDrawNothing) {
  Stream s = lab_stream(1);
  EXPECT_EQ(hypergeometric(0, 10, 20, s), 0u);
  EXPECT_EQ(hypergeometric(5, 0, 20, s), 0u);
  EXPECT_EQ(hypergeometric(5, 20, 0, s), 5u);
  EXPECT_EQ(hypergeometric(30, 10, 20, s), 10u);
  EXPECT_EQ(hypergeometric(0, 0, 0, s), 0u);
  const std::uint64_t half = std::uint64_t{1} << 62;
  EXPECT_EQ(hypergeometric(2 * half, half, half, s), half);
  EXPECT_EQ(hypergeometric(2 * half - 1, 0, 2 * half, s), 0u);
  EXPECT_EQ(hypergeometric(123, 2 * half, 0, s), 123u);
  EXPECT_EQ(s.blocks_used(), 0u);
}

TEST(Hypergeometric, RejectsImpossibleUrns) {
  Stream s = lab_stream(2);
  EXPECT_THROW(hypergeometric(31, 10, 20, s), std::invalid_argument);
  EXPECT_THROW(hypergeometric(1, std::uint64_t{1} << 63, 1, s), std::invalid_argument);
  EXPECT_THROW(hypergeometric(1, ~std::uint64_t{0}, ~std::uint64_t{0}, s), std::invalid_argument);
  EXPECT_NO_THROW(hypergeometric(1, std::uint64_t{1} << 62, std::uint64_t{1} << 62, s));
}

TEST(Hypergeometric, SameStreamAddressGivesSameValues) {
  for (const auto& [n, w, b] : {std::tuple<std::uint64_t, std::uint64_t, std::uint64_t>{5, 3, 7},
                                {100, 400, 600},
                                {std::uint64_t{1} << 39, (std::uint64_t{1} << 40) + 12345, (std::uint64_t{1} << 40) - 999}}) {
    Stream a = lab_stream(3, 17), b1 = lab_stream(3, 17), other = lab_stream(3, 18);
    std::vector<std::uint64_t> va, vb, vo;
    for (int i = 0; i < 100; ++i) {
      va.push_back(hypergeometric(n, w, b, a));
      vb.push_back(hypergeometric(n, w, b, b1));
      vo.push_back(hypergeometric(n, w, b, other));
    }
    EXPECT_EQ(va, vb);
    EXPECT_NE(va, vo);
  }
}

TEST(Hypergeometric, ResultStaysInTheSupport) {
  Stream s = lab_stream(4);
  for (std::uint64_t t = 0; t < 2000; ++t) {
    const std::uint64_t w = s.next_below(60), b = s.next_below(60), n = s.next_below(w + b + 1);
    const std::uint64_t k = hypergeometric(n, w, b, s);
    EXPECT_LE(k, std::min(n, w));
    EXPECT_GE(k + b, n);  // at most b black balls among the draws
  }
}

// ---------------------------------------------------------------------------
// hypergeometric.hpp: distribution

// Exact pmf over k = 0..kmax (kmax = min(n, w) or where the tail drops below
// 1e-40): unnormalised weights by the recurrence
// r(k+1)/r(k) = (n-k)(w-k) / ((k+1)(b-n+k+1)) in long double from the lowest
// value of the support, then normalised. Independent of log_factorial.hpp and
// valid for any 64-bit urn whose support near the mean is short.
std::vector<double> exact_pmf(std::uint64_t n, std::uint64_t w, std::uint64_t b) {
  const std::uint64_t lo = n > b ? n - b : 0;
  const std::uint64_t hi = std::min(n, w);
  std::vector<long double> weights(lo, 0.0L);
  long double r = 1, max_weight = 0, sum = 0;
  for (std::uint64_t k = lo;; ++k) {
    weights.push_back(r);
    sum += r;
    max_weight = std::max(max_weight, r);
    if (k == hi || (r < 1e-40L * max_weight && k > lo + 10)) break;
    r *= static_cast<long double>(n - k) * static_cast<long double>(w - k) /
         (static_cast<long double>(k + 1) * static_cast<long double>(b - n + k + 1));
  }
  std::vector<double> pmf(weights.size());
  for (std::size_t k = 0; k < weights.size(); ++k) pmf[k] = static_cast<double>(weights[k] / sum);
  return pmf;
}

// Draws `samples` values with `draw` and chi-square tests them against the
// exact pmf (cells pooled to >= 5 expected; values beyond the tabulated
// support land in an extra cell of probability 0, which fails the test).
template <class Draw>
testing::ChiSquareResult chi_square_against_pmf(std::uint64_t n, std::uint64_t w, std::uint64_t b,
                                                std::uint64_t samples, Draw&& draw) {
  std::vector<double> pmf = exact_pmf(n, w, b);
  std::vector<std::uint64_t> counts(pmf.size() + 1, 0);
  for (std::uint64_t i = 0; i < samples; ++i) {
    const std::uint64_t k = draw();
    ++counts[std::min<std::uint64_t>(k, pmf.size())];
  }
  pmf.push_back(0.0);
  if (counts.back() != 0) return {std::numeric_limits<double>::infinity(), 1, 0.0};
  counts.pop_back();
  pmf.pop_back();
  return testing::pooled_chi_square(counts, pmf);
}

struct Urn {
  std::uint64_t draws, white, black;
};

// The public function on a grid covering both regimes, both symmetries
// (draws > total/2, white > black) and the regime boundary.
// 14 chi-square tests, 200000 samples each, p < 1e-6 each.
TEST(HypergeometricDistribution, MatchesExactPmfOnSmallUrns) {
  const std::vector<Urn> urns = {
      {5, 3, 7},      {10, 10, 10},   {50, 30, 70},   {100, 400, 600}, {20, 1000, 5},
      {1, 1, 1},      {900, 400, 600}, {40, 40, 40},  {500, 50, 950},  {3, 2, 1000000},
      {60, 30, 30},   {700, 300, 700}, {62, 50, 50}, {66, 50, 50}};
  std::uint64_t id = 100;
  for (const Urn& u : urns) {
    Stream s = lab_stream(id++);
    const auto r = chi_square_against_pmf(u.draws, u.white, u.black, 200000,
                                          [&] { return hypergeometric(u.draws, u.white, u.black, s); });
    EXPECT_GT(r.p_value, kAlpha) << "h(" << u.draws << ", " << u.white << ", " << u.black << ") chi2 "
                                 << r.statistic << " dof " << r.dof;
  }
}

// Each regime on its own, also outside the range where it is selected, on
// reduced urns (draws <= total/2, white <= black): inversion up to mean 40,
// HRUA down to mean 0.3. 2 x 9 = 18 chi-square tests, 100000 samples each.
TEST(HypergeometricDistribution, BothRegimesMatchExactPmf) {
  const std::vector<Urn> urns = {{5, 3, 7},      {10, 10, 10},  {50, 30, 70},   {100, 400, 600}, {20, 5, 1000},
                                 {1, 1, 1},      {40, 40, 40},  {3, 100, 900},  {500, 80, 920}};
  std::uint64_t id = 200;
  for (const Urn& u : urns) {
    Stream si = lab_stream(id++), sh = lab_stream(id++);
    const auto ri = chi_square_against_pmf(u.draws, u.white, u.black, 100000, [&] {
      return detail::hypergeometric_inversion(u.draws, u.white, u.black, si);
    });
    const auto rh = chi_square_against_pmf(u.draws, u.white, u.black, 100000, [&] {
      return detail::hypergeometric_hrua(u.draws, u.white, u.black, sh);
    });
    EXPECT_GT(ri.p_value, kAlpha) << "inversion h(" << u.draws << ", " << u.white << ", " << u.black
                                  << ") chi2 " << ri.statistic << " dof " << ri.dof;
    EXPECT_GT(rh.p_value, kAlpha) << "hrua h(" << u.draws << ", " << u.white << ", " << u.black << ") chi2 "
                                  << rh.statistic << " dof " << rh.dof;
  }
}

// Huge urns with short supports: the exact pmf is still tabulable.
// Inversion at mean ~8 with N ~ 2^62 (P(X=0) from the log-factorial
// remainders) and HRUA at mean ~80 with N ~ 2^60. Each urn also through both
// symmetries: drawing the complement N - n with the colours swapped counts the
// black balls left behind, b - n + X. 4 chi-square tests, 100000 samples each.
TEST(HypergeometricDistribution, MatchesExactPmfOnHugeUrnsWithShortSupport) {
  const std::uint64_t k40 = std::uint64_t{1} << 40, k62 = std::uint64_t{1} << 62;
  const std::vector<Urn> urns = {{k40 + 1, (std::uint64_t{1} << 25) + 7, k62 - (std::uint64_t{1} << 25)},
                                 {5 * k40, std::uint64_t{1} << 24, std::uint64_t{1} << 60}};
  std::uint64_t id = 300;
  for (const Urn& u : urns) {
    Stream s = lab_stream(id++);
    const auto r = chi_square_against_pmf(u.draws, u.white, u.black, 100000,
                                          [&] { return hypergeometric(u.draws, u.white, u.black, s); });
    EXPECT_GT(r.p_value, kAlpha) << "h(" << u.draws << ", " << u.white << ", " << u.black << ") chi2 "
                                 << r.statistic << " dof " << r.dof;
    Stream s2 = lab_stream(id++);
    const std::uint64_t total = u.white + u.black;
    const auto r2 = chi_square_against_pmf(u.draws, u.white, u.black, 100000, [&] {
      return hypergeometric(total - u.draws, u.black, u.white, s2) - (u.black - u.draws);
    });
    EXPECT_GT(r2.p_value, kAlpha) << "complemented h(" << u.draws << ", " << u.white << ", " << u.black
                                  << ") chi2 " << r2.statistic << " dof " << r2.dof;
  }
}

// Sample mean and variance at 64-bit sizes against the exact formulas
// mean = n w / N, var = n (w/N) (b/N) (N - n) / (N - 1), as z-scores with the
// sample's standard errors (sd / sqrt(S) and var sqrt(2 / S); the
// distribution is close to normal at these sizes). Plus the low six bits of
// X, uniform when sd >= 100 (to ~e^-48): catches a sampler that rounds X
// to a double grid. 11 z-tests at |z| > 4.89 (p < 1e-6 each: 6 urns, the
// variance skipped for the one with mean < 1), plus 4 chi-square tests on
// X mod 64 (63 dof).
TEST(HypergeometricDistribution, MeanVarianceAndLowBitsAtSixtyFourBits) {
  const std::uint64_t k39 = std::uint64_t{1} << 39, k40 = std::uint64_t{1} << 40, k60 = std::uint64_t{1} << 60,
                      k62 = std::uint64_t{1} << 62;
  const std::vector<Urn> urns = {
      {k39, k40 + 12345, k40 - 999},            // HRUA after a colour swap
      {3 * k60, k62 - 5, k62 - k40 + 1},        // N ~ 2^63: draws complemented, colours swapped
      {k60 + 12345, k62 + 98765, k62 - 98765},  // N = 2^63 exactly
      {1000000, k62, k62},                      // short draws from the largest urn
      {k40, 17, k62},                           // inversion, mean ~ 4e-11
      {k40, (std::uint64_t{1} << 24) + 3, k62}, // inversion, mean ~ 4
  };
  constexpr std::uint64_t kSamples = 50000;
  std::uint64_t id = 400;
  for (std::size_t u_index = 0; u_index < urns.size(); ++u_index) {
    const Urn& u = urns[u_index];
    Stream s = lab_stream(id++);
    const long double total = static_cast<long double>(u.white) + static_cast<long double>(u.black);
    const long double mean = static_cast<long double>(u.draws) * static_cast<long double>(u.white) / total;
    const long double variance = mean * (static_cast<long double>(u.black) / total) *
                                 ((total - static_cast<long double>(u.draws)) / (total - 1));
    // Accumulate deviations from an integer near the mean, exactly in int64.
    const std::uint64_t centre = static_cast<std::uint64_t>(mean);
    long double sum = 0, sum_sq = 0;
    std::vector<std::uint64_t> low_bits(64, 0);
    for (std::uint64_t i = 0; i < kSamples; ++i) {
      const std::uint64_t k = hypergeometric(u.draws, u.white, u.black, s);
      ASSERT_LE(k, std::min(u.draws, u.white));
      const long double dev = static_cast<long double>(static_cast<std::int64_t>(k - centre));
      sum += dev;
      sum_sq += dev * dev;
      ++low_bits[k & 63];
    }
    const long double sample_mean = sum / kSamples;
    const long double sample_variance = (sum_sq - sum * sum / kSamples) / (kSamples - 1);
    const long double mean_offset = mean - centre;
    if (variance > 0) {
      const double z_mean = static_cast<double>((sample_mean - mean_offset) / std::sqrt(variance / kSamples));
      const double z_var = static_cast<double>((sample_variance - variance) / (variance * std::sqrt(2.0L / kSamples)));
      EXPECT_GT(testing::normal_two_sided_p_value(z_mean), kAlpha) << "urn " << u_index << " z " << z_mean;
      // Tiny means (urn 4: almost always 0) have a skewed variance estimator; only the mean is tested.
      if (mean > 1) {
        EXPECT_GT(testing::normal_two_sided_p_value(z_var), kAlpha) << "urn " << u_index << " z " << z_var;
      }
    }
    if (variance > 1e4) {
      const double stat = testing::chi_square_statistic(low_bits, std::vector<double>(64, 1.0 / 64));
      EXPECT_GT(testing::chi_square_p_value(stat, 63), kAlpha) << "urn " << u_index << " low bits chi2 " << stat;
    }
  }
}

}  // namespace
}  // namespace extshuffle::core::hypergeometric_test
