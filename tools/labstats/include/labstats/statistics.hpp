// Small, self-contained statistics for the statistical tests and for
// tools/permlab: chi-square statistics and p-values (regularized incomplete
// gamma function), pooling of sparse bins, normal tail probabilities and the
// noise of the position-matrix bias.
// Double precision throughout; p-values are accurate to ~1e-10 relative, far
// better than the 1e-6 thresholds the tests use.
#pragma once

#include <cstdint>
#include <span>

namespace extshuffle::labstats {

// Q(a, x) = Gamma(a, x) / Gamma(a), the upper regularized incomplete gamma
// function, for a > 0, x >= 0: power series of P = 1 - Q for x < a + 1,
// Lentz's continued fraction for Q otherwise (Abramowitz & Stegun 6.5.29, 6.5.31).
// Throws std::invalid_argument outside that domain.
double regularized_gamma_q(double a, double x);

// P(chi-square with `dof` degrees of freedom >= statistic). Throws
// std::invalid_argument if dof == 0.
double chi_square_p_value(double statistic, std::uint64_t dof);

// Pearson's statistic sum (O - E)^2 / E with E = total * probabilities[k];
// cells with probability 0 must have count 0 (otherwise +infinity). Throws
// std::invalid_argument if the spans differ in size.
double chi_square_statistic(std::span<const std::uint64_t> counts, std::span<const double> probabilities);

struct ChiSquareResult {
  double statistic = 0;
  std::uint64_t dof = 0;
  double p_value = 1;
};

// Chi-square test of counts against probabilities (which should sum to 1, or
// to 1 minus a tail mass that then counts as one more cell with no
// observations expected beyond rounding). Adjacent cells, in order, are pooled
// until each pooled cell expects at least `min_expected` observations (the
// last partial group joins its predecessor), so that the chi-square
// approximation holds; dof = pooled cells - 1. Fewer than two pooled cells:
// nothing to test, p-value 1.
ChiSquareResult pooled_chi_square(std::span<const std::uint64_t> counts, std::span<const double> probabilities,
                                  double min_expected = 5.0);

// P(|Z| >= |z|) for a standard normal Z.
double normal_two_sided_p_value(double z);

// Waechter et al.'s bias B(M_n) = (1/n) sum |M(i,j) - 1/n| of the position
// matrix of S sampled permutations of n records: its mean and sd under
// uniformity, each cell X ~ Binomial(S, 1/n) (the pmf summed in logs within
// 40 sd of its mean; the rest weighs < 1e-300). Cost O(sqrt(S / n)).
struct BiasNoise {
  double mean = 0;
  double sd = 0;
};
BiasNoise bias_noise(std::uint64_t n, std::uint64_t samples);

}  // namespace extshuffle::labstats
