// Small, self-contained statistics for the statistical tests: chi-square
// statistics and p-values (regularized incomplete gamma function), pooling of
// sparse bins, and normal tail probabilities. Double precision throughout;
// p-values are accurate to ~1e-10 relative, far better than the 1e-6
// thresholds the tests use.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <stdexcept>
#include <vector>

namespace extshuffle::testing {

// Q(a, x) = Gamma(a, x) / Gamma(a), the upper regularized incomplete gamma
// function, for a > 0, x >= 0: power series of P = 1 - Q for x < a + 1,
// Lentz's continued fraction for Q otherwise (Abramowitz & Stegun 6.5.29, 6.5.31).
inline double regularized_gamma_q(double a, double x) {
  if (!(a > 0) || !(x >= 0)) throw std::invalid_argument("regularized_gamma_q: need a > 0, x >= 0");
  if (x == 0) return 1.0;
  const double log_prefactor = -x + a * std::log(x) - std::lgamma(a);
  constexpr double kEps = 1e-16;
  constexpr int kMaxIterations = 10'000'000;
  if (x < a + 1.0) {
    double term = 1.0 / a;
    double sum = term;
    for (int n = 1; n < kMaxIterations; ++n) {
      term *= x / (a + n);
      sum += term;
      if (term < sum * kEps) break;
    }
    return 1.0 - sum * std::exp(log_prefactor);
  }
  constexpr double kTiny = std::numeric_limits<double>::min() / kEps;
  double b = x + 1.0 - a;
  double c = 1.0 / kTiny;
  double d = 1.0 / b;
  double h = d;
  for (int i = 1; i < kMaxIterations; ++i) {
    const double an = -i * (i - a);
    b += 2.0;
    d = an * d + b;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = b + an / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1.0 / d;
    const double delta = d * c;
    h *= delta;
    if (std::fabs(delta - 1.0) < kEps) break;
  }
  return std::exp(log_prefactor) * h;
}

// P(chi-square with `dof` degrees of freedom >= statistic).
inline double chi_square_p_value(double statistic, std::uint64_t dof) {
  if (dof == 0) throw std::invalid_argument("chi_square_p_value: zero degrees of freedom");
  return regularized_gamma_q(0.5 * static_cast<double>(dof), 0.5 * (statistic > 0 ? statistic : 0.0));
}

// Pearson's statistic sum (O - E)^2 / E with E = total * probabilities[k];
// cells with probability 0 must have count 0 (otherwise +infinity).
inline double chi_square_statistic(std::span<const std::uint64_t> counts, std::span<const double> probabilities) {
  if (counts.size() != probabilities.size()) throw std::invalid_argument("chi_square_statistic: size mismatch");
  double total = 0;
  for (const std::uint64_t c : counts) total += static_cast<double>(c);
  double statistic = 0;
  for (std::size_t k = 0; k < counts.size(); ++k) {
    const double expected = total * probabilities[k];
    const double diff = static_cast<double>(counts[k]) - expected;
    if (expected > 0) {
      statistic += diff * diff / expected;
    } else if (counts[k] != 0) {
      return std::numeric_limits<double>::infinity();
    }
  }
  return statistic;
}

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
// approximation holds; dof = pooled cells - 1.
inline ChiSquareResult pooled_chi_square(std::span<const std::uint64_t> counts,
                                         std::span<const double> probabilities, double min_expected = 5.0) {
  if (counts.size() != probabilities.size()) throw std::invalid_argument("pooled_chi_square: size mismatch");
  double total = 0;
  for (const std::uint64_t c : counts) total += static_cast<double>(c);
  std::vector<std::uint64_t> pooled_counts;
  std::vector<double> pooled_probabilities;
  std::uint64_t count = 0;
  double probability = 0;
  for (std::size_t k = 0; k < counts.size(); ++k) {
    count += counts[k];
    probability += probabilities[k];
    if (probability * total >= min_expected) {
      pooled_counts.push_back(count);
      pooled_probabilities.push_back(probability);
      count = 0;
      probability = 0;
    }
  }
  if (count != 0 || probability != 0) {
    if (pooled_counts.empty()) {
      pooled_counts.push_back(count);
      pooled_probabilities.push_back(probability);
    } else {
      pooled_counts.back() += count;
      pooled_probabilities.back() += probability;
    }
  }
  ChiSquareResult result;
  if (pooled_counts.size() < 2) return result;  // nothing to test
  result.statistic = chi_square_statistic(pooled_counts, pooled_probabilities);
  result.dof = pooled_counts.size() - 1;
  result.p_value = chi_square_p_value(result.statistic, result.dof);
  return result;
}

// P(|Z| >= |z|) for a standard normal Z.
inline double normal_two_sided_p_value(double z) { return std::erfc(std::fabs(z) / std::sqrt(2.0)); }

}  // namespace extshuffle::testing
