// Where output positions of P(seed, N) come from, traced backwards through
// the plan without running it: output position j lies in one bucket of a
// split node, that bucket's input is the concatenation of one slice of
// every chunk's shuffle (the communication matrix says which), so each
// position is traced down to its leaf and back up through the chunk
// shuffles to the input index it came from. modes/permutation_prefix
// (the first K positions of any plan) and extshuffle-mpi's spread roots
// (each rank's share of a root of one or two levels) are built on it.
#pragma once

#include <cstdint>
#include <vector>

#include "extshuffle/core/plan.hpp"
#include "extshuffle/core/variable_philox.hpp"

namespace extshuffle::ioperm {

// Positions in the output of a bijective shuffle `f` of m records (Mitchell
// et al., Listing 1: output[j] = input[f(i_j)], i_0 < i_1 < ... the domain
// indices with f(i) < m): the input index at each of `positions` (any
// order). Cost: one evaluation a position when the domain is exactly m
// (then i_j = j), else the domain walked up to the largest position wanted
// (at most twice that many evaluations; memory: a word per position walked).
std::vector<std::uint64_t> shuffled_inputs(const core::VariablePhilox& f, std::uint64_t m,
                                           const std::vector<std::uint64_t>& positions);

// Bucket `b` of the split node `node`: for each of `queries` (positions in
// the bucket's input, any order), the position within `node`'s input of the
// record there. Cost: one descent of the matrix's range tree for all the
// queries (drawing colours 0..b of each split on the paths to the rows they
// come from, exactly as multivariate_hypergeometric() draws them), then
// each chunk's shuffle at the positions wanted from it (shuffled_inputs).
std::vector<std::uint64_t> bucket_sources(std::uint64_t seed, const core::Node& node, std::uint64_t b,
                                          const std::vector<std::uint64_t>& queries,
                                          const core::PlanConstants& constants);

// A root of one or two levels (a leaf, or a split whose buckets are all
// leaves): the sources of any range of its output. Its buckets' leaf
// shuffles are bijections on power-of-two domains; laid end to end they
// form the root's domain, which shares of work can split: domain point i of
// bucket j gives an output record when f_j(i) < m_j, and the points of a
// range give, in order, a contiguous range of the output.
class RootSources {
 public:
  // Throws std::invalid_argument if check_plan() rejects n or its plan has
  // more than two levels.
  RootSources(std::uint64_t seed, std::uint64_t n, const core::PlanConstants& constants);

  // The sum of the buckets' domains (the leaf's for a leaf root).
  std::uint64_t domain_size() const { return domain_first_.back(); }

  // Where share `share` of `shares` begins in the domain: the point at which
  // the expected count of outputs before it is N share / shares (a bucket's
  // domain holds its m_j records at the density m_j / D_j), so that shares
  // of the domain give near-equal shares of the output, within sampling
  // noise, even when the buckets' domains differ. Share 0 begins at 0;
  // share `shares` at domain_size().
  std::uint64_t domain_share(int share, int shares) const;

  // The input indices of the outputs that domain points [first, end) give,
  // in output order. Cost: end - first bijection evaluations, and the
  // chunks' side as bucket_sources() says.
  std::vector<std::uint64_t> domain_inputs(std::uint64_t first, std::uint64_t end) const;

  // The input indices of output positions [first, end), in order. Cost: as
  // domain_inputs() over the domain points that give them, plus, where a
  // bucket's domain is wider than its records, the walk from the bucket's
  // first domain point to the range.
  std::vector<std::uint64_t> range_inputs(std::uint64_t first, std::uint64_t end) const;

 private:
  // Bucket j's positions (in its input) to the root's input indices.
  std::vector<std::uint64_t> sources(std::uint64_t j, const std::vector<std::uint64_t>& positions) const;
  core::VariablePhilox bijection(std::uint64_t j) const;

  std::uint64_t seed_;
  core::Node root_;
  core::PlanConstants constants_;
  bool leaf_;
  std::uint64_t buckets_;                    // 1 for a leaf root
  std::vector<std::uint64_t> domain_first_;  // buckets_ + 1 entries
};

}  // namespace extshuffle::ioperm
