#include "labstats/statistics.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <stdexcept>
#include <vector>

namespace extshuffle::labstats {

double regularized_gamma_q(double a, double x) {
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

double chi_square_p_value(double statistic, std::uint64_t dof) {
  if (dof == 0) throw std::invalid_argument("chi_square_p_value: zero degrees of freedom");
  return regularized_gamma_q(0.5 * static_cast<double>(dof), 0.5 * (statistic > 0 ? statistic : 0.0));
}

double chi_square_statistic(std::span<const std::uint64_t> counts, std::span<const double> probabilities) {
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

ChiSquareResult pooled_chi_square(std::span<const std::uint64_t> counts, std::span<const double> probabilities,
                                  double min_expected) {
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

double normal_two_sided_p_value(double z) { return std::erfc(std::fabs(z) / std::sqrt(2.0)); }

BiasNoise bias_noise(std::uint64_t n, std::uint64_t samples) {
  // One cell: X ~ Binomial(S, p), p = 1/n; |X/S - p| summed over the pmf
  // within 40 sd of the mean (the rest weighs < 1e-300).
  const double s = static_cast<double>(samples), p = 1.0 / static_cast<double>(n);
  const double mean = s * p, sd = std::sqrt(s * p * (1 - p));
  const auto first = static_cast<std::uint64_t>(std::max(0.0, std::floor(mean - 40 * sd - 1)));
  const auto last = static_cast<std::uint64_t>(std::min(s, std::ceil(mean + 40 * sd + 1)));
  double e1 = 0, e2 = 0;
  for (std::uint64_t k = first; k <= last; ++k) {
    const double dk = static_cast<double>(k);
    const double log_pmf = std::lgamma(s + 1) - std::lgamma(dk + 1) - std::lgamma(s - dk + 1) + dk * std::log(p) +
                           (s - dk) * std::log1p(-p);
    const double d = std::fabs(dk / s - p);
    e1 += d * std::exp(log_pmf);
    e2 += d * d * std::exp(log_pmf);
  }
  // B = (1/n) * (sum of n^2 cells): mean n * e1; variance (1/n^2) * n^2 * Var(cell).
  return BiasNoise{static_cast<double>(n) * e1, std::sqrt(std::max(0.0, e2 - e1 * e1))};
}

}  // namespace extshuffle::labstats
