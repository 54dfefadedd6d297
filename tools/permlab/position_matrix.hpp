// Waechter et al.'s position matrix M_n (section 3.1): M(i, j) = P(record j
// ends at output position i), estimated from samples, and their bias measure
// B(M_n) = (1/n) sum_ij |M(i, j) - 1/n| (section 3.2). H0: uniform, every
// M(i, j) = 1/n.
//
// A sampled B is never 0: each cell count X ~ Binomial(S, 1/n) under H0, so
// E[B] = n E|X / S - 1/n| > 0. It is computed exactly from the binomial pmf so
// a measured B can be compared with the B of a perfect shuffle at the same S.
// Its standard deviation is approximated by treating the n^2 cells as
// independent (they are slightly negatively correlated: rows and columns sum
// to S), which overstates it a little, so bias_z is conservative.
//
// Chi-square tests: the whole matrix ((n-1)^2 degrees of freedom) and every
// row (n - 1 each; the smallest p-value, Bonferroni-corrected by n). pass
// requires both at alpha / 2, so the false-failure rate is at most alpha.
// Valid when S / n >= 5 (checked).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "generators.hpp"

namespace permlab {

struct PositionResult {
  std::uint64_t n = 0;
  std::uint64_t samples = 0;
  double alpha = 0.01;
  double bias = 0;           // B of the sampled matrix
  double expected_bias = 0;  // E[B] under H0 at this S
  double bias_sd = 0;        // sd of B under H0 (independent-cell approximation)
  double bias_z = 0;         // (bias - expected_bias) / bias_sd
  double chi2 = 0;           // whole matrix
  std::uint64_t dof = 0;     // (n - 1)^2
  double p_value = 1;
  double worst_row_p_value = 1;  // smallest row p-value, times n (Bonferroni), at most 1
  std::uint64_t worst_row = 0;
  bool pass = true;
};

// The test from counts: counts[i * n + j] = samples with record j at position i.
PositionResult position_test_of_counts(std::uint64_t n, std::span<const std::uint64_t> counts, double alpha);

// Draws `samples` permutations and tests their position matrix; if
// counts_out is given it receives the n x n counts. Throws
// std::invalid_argument when samples / n < 5.
PositionResult position_test(const GeneratorOptions& options, std::uint64_t n, std::uint64_t samples, int threads,
                             double alpha, std::vector<std::uint64_t>* counts_out = nullptr);

}  // namespace permlab
