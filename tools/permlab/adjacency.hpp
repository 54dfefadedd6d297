// Adjacency ("successions") test: how often output position i+1 holds the
// record that followed the record at position i in the input
// (order[i+1] == order[i] + 1), and, separately, the one that preceded it
// (order[i+1] == order[i] - 1). A weak generator keeps runs of neighbours
// together: an LCG with a = 1 is a rotation, a few Feistel rounds barely mix
// the low bits, a chunked plan could leak chunk structure.
//
// Under uniformity, for each of the n-1 neighbouring position pairs
// P(order[i+1] = order[i] + 1) = P(order[i] != n-1) / (n-1) = 1/n, so the
// count per permutation has mean (n-1)/n. Every two distinct indicators have
// E[I_i I_j] = 1/(n(n-1)) (disjoint pairs: (n-2)(n-3) value pairs of
// probability 1/(n(n-1)(n-2)(n-3)); overlapping ones: n-2 triples of
// probability 1/(n(n-1)(n-2))), which gives Var = (n^2 - n - 1) / n^2 (-> 1:
// nearly Poisson(1)). Over S independent samples the total is compared with
// S (n-1)/n by a z-score. pass: both two-sided p-values >= alpha / 2
// (false-failure rate at most alpha, normal approximation, S >= 100).
#pragma once

#include <cstdint>

#include "generators.hpp"

namespace permlab {

struct AdjacencyResult {
  std::uint64_t n = 0;
  std::uint64_t samples = 0;
  double alpha = 0.01;
  std::uint64_t successions = 0;  // order[i+1] == order[i] + 1, summed over samples
  std::uint64_t reversals = 0;    // order[i+1] == order[i] - 1
  double expected = 0;            // S (n-1) / n, for each of the two counts
  double sd = 0;                  // sqrt(S (n^2 - n - 1)) / n
  double z_successions = 0;
  double z_reversals = 0;
  double p_value = 1;  // the smaller two-sided p-value, times 2 (Bonferroni), at most 1
  bool pass = true;
};

AdjacencyResult adjacency_of_counts(std::uint64_t n, std::uint64_t samples, std::uint64_t successions,
                                    std::uint64_t reversals, double alpha);

// Throws std::invalid_argument when n < 2 or samples < 100.
AdjacencyResult adjacency_test(const GeneratorOptions& options, std::uint64_t n, std::uint64_t samples, int threads,
                               double alpha);

}  // namespace permlab
