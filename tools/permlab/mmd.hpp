// The MMD test with the Mallows kernel (Mitchell et al. section 5), in the
// corrected form of the revised paper: H0 = the generator's permutations are
// uniform.
//
// Kernel: K(s, t) = exp(-lambda * n_dis(s, t) / C(n, 2)), n_dis = the Kendall
// tau distance (discordant pairs), O(n log n) by a merge-sort inversion count.
// Under uniformity E[K(I, s)] = prod_{j=1..n} (1 - e^{-lambda j / C}) /
// (j (1 - e^{-lambda / C})) =: mu(lambda), and by right invariance
// MMD^2(uniform, q) = E_{s,t ~ q}[K(s, t)] - mu(lambda).
//
// Statistic (revised paper, eq. 5): the m samples are split into m/2
// independent pairs, T = (2/m) sum_i K(s_{2i-1}, s_{2i}) - mu(lambda), an
// unbiased estimate of MMD^2 that is 0 iff q is uniform (the kernel is
// characteristic). Because the sum has m/2 terms, not m,
// Var(T) = 2 Var(K) / m under H0 with Var(K) = mu(2 lambda) - mu(lambda)^2:
// the factor of two the first version of the paper missed (it divided by m).
// Acceptance regions at level alpha:
//   Hoeffding (any m; K in [0, 1], m/2 terms): |T| < sqrt(log(2 / alpha) / m)
//   CLT (large m):                             |T| < sqrt(2 Var(K) / m) * z_{1 - alpha/2}
// where z_{1-alpha/2} = sqrt(2) erfinv(1 - alpha). False-failure rate: at most
// alpha for Hoeffding (a bound), about alpha for the CLT threshold.
//
// Also reported: the first version's one-sample statistic
// T1 = (1/m) sum_i K(I, s_i) - mu(lambda), Var(T1) = Var(K) / m. It only tests
// the mean Kendall distance to the identity, so it is not consistent against
// every alternative; kept to compare with the paper's Figures 7-9.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "generators.hpp"

namespace permlab {

// Pairs i < j with values[i] > values[j]; O(n log n) by merge sort. `scratch`
// is resized as needed (reuse it across calls to avoid allocations).
std::uint64_t count_inversions(std::span<const std::uint32_t> values, std::vector<std::uint32_t>& scratch);

// n_dis(s, t): pairs of positions (i < j) ordered differently by the two
// orders (each a permutation of 0..n-1). Uses the inversions of t o s^-1.
std::uint64_t discordant_pairs(std::span<const std::uint32_t> s, std::span<const std::uint32_t> t,
                               std::vector<std::uint32_t>& scratch);

// exp(-lambda * discordant / C(n, 2)); 1 for n < 2.
double mallows_kernel(std::uint64_t discordant, std::uint64_t n, double lambda);

// mu(lambda) = E[K(I, s)] for uniform s, by the product formula (in logs).
double mallows_mean(std::uint64_t n, double lambda);
// Var(K(I, s)) for uniform s = mu(2 lambda) - mu(lambda)^2.
double mallows_variance(std::uint64_t n, double lambda);

// z with P(|Z| >= z) = alpha for a standard normal Z (bisection on erfc).
double normal_two_sided_quantile(double alpha);

struct MmdResult {
  std::uint64_t n = 0;
  std::uint64_t samples = 0;  // m, even
  double lambda = 5;
  double alpha = 0.01;
  double kernel_mean = 0;      // mu(lambda)
  double kernel_variance = 0;  // Var(K) under H0
  double statistic = 0;        // T, the paired estimate of MMD^2
  double hoeffding_threshold = 0;
  double clt_threshold = 0;
  double z = 0;        // T / sd(T) under H0
  double p_value = 1;  // two-sided normal p-value of z
  bool pass_hoeffding = true;
  bool pass_clt = true;
  double identity_statistic = 0;      // T1 of the first version
  double identity_clt_threshold = 0;  // sqrt(Var(K) / m) * z_{1-alpha/2}
  bool pass_identity_clt = true;
};

// The test from sums: pair_kernel_sum = sum of K over the m/2 pairs,
// identity_kernel_sum = sum of K(I, s) over the m samples.
MmdResult mmd_from_sums(std::uint64_t n, std::uint64_t samples, double pair_kernel_sum, double identity_kernel_sum,
                        double lambda, double alpha);

// Draws `samples` permutations (rounded down to even, at least 2) and tests them.
MmdResult mmd_test(const GeneratorOptions& options, std::uint64_t n, std::uint64_t samples, int threads, double alpha,
                   double lambda = 5.0);

}  // namespace permlab
