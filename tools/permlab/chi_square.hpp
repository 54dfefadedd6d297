// Chi-square test over all k! orders (Mitchell et al. section 5, Fig. 6):
// H0: every order of the n records is equally likely. For n <= 6 the test
// counts the n! orders themselves (k = n). For any n it can count the
// relative order of k <= 6 chosen records, 0, s, 2s, ..., (k-1)s: under H0
// their relative order is uniform over the k! orders too, so this extends the
// test to every n (it sees one projection of the permutation, not all of it).
#pragma once

#include <cstdint>
#include <span>

#include "generators.hpp"

namespace permlab {

struct ChiSquareResult {
  std::uint64_t n = 0;
  std::uint64_t pattern_records = 0;  // k
  std::uint64_t stride = 1;           // s
  std::uint64_t samples = 0;
  std::uint64_t orders_seen = 0;  // cells with at least one sample
  double statistic = 0;           // Pearson's sum (O - E)^2 / E over the n! orders
  std::uint64_t dof = 0;          // n! - 1
  double p_value = 1;             // P(chi2_dof >= statistic)
  double alpha = 0.01;
  double critical_value = 0;  // the statistic at which p_value = alpha
  bool pass = true;           // p_value >= alpha: false-failure rate alpha under H0
};

// The largest k the test accepts (720 cells).
inline constexpr std::uint64_t kMaxChiSquareRecords = 6;

// The test of counts per order (counts.size() = n!, uniform expectation).
ChiSquareResult chi_square_of_counts(std::span<const std::uint64_t> counts, double alpha);

// x with P(chi2_dof >= x) = alpha, by bisection on the p-value (~1e-12 relative).
double chi_square_critical_value(std::uint64_t dof, double alpha);

// Draws `samples` permutations of n records and tests the relative order of
// records 0, stride, ..., (k-1) stride (k = 0: k = n, which needs n <= 6).
// Throws std::invalid_argument if k is outside 2..6, (k-1) stride >= n, or
// the expected count per order is below 5 (the chi-square approximation
// would not hold).
ChiSquareResult chi_square_test(const GeneratorOptions& options, std::uint64_t n, std::uint64_t samples, int threads,
                                double alpha, std::uint64_t pattern_records = 0, std::uint64_t stride = 1);

}  // namespace permlab
