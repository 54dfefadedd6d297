// The order of a bijective shuffle of m records on a wider domain (Mitchell
// et al., Algorithm 1: output k takes f(d_k), d_k the k-th domain point with
// f(d) < m), in whichever of two forms costs less to build:
// - the holes: the domain points whose image is no record, f^-1(y) for y in
//   [m, D), sorted: D - m inversions and words. Output k is then f(k + j),
//   j the holes before that point, one evaluation away.
// - the order itself: output k's record, D vectorised evaluations
//   (device::shuffle_permutation) and m 32-bit words.
// At the shipped constants a leaf of N / 2^k records has few holes (358 of
// 2^20 at N = 10^9): its holes cost 9 us where its order costs 2^20
// evaluations.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "extshuffle/core/variable_philox.hpp"

namespace extshuffle::modes {

class ShuffleCompaction {
 public:
  // The shuffle of m records (m <= 2^32, m < f.domain_size()) by f.
  ShuffleCompaction(const core::VariablePhilox& f, std::uint64_t m);

  // values[k]: an output position (< m), replaced by the record there.
  // Cost: a lookup each (order), or one vectorised evaluation of f each and
  // the holes before it: a walk along the holes when the positions ascend
  // (`ascending`), else a binary search.
  void records(const core::VariablePhilox& f, std::span<std::uint64_t> values, bool ascending = false) const;

  // The output position of domain point d (f(d) < m): the points before d
  // that give records. Cost: a binary search over the holes, or, when the
  // order is held instead, d evaluations of f.
  std::uint64_t output_of(const core::VariablePhilox& f, std::uint64_t d) const;

  std::size_t memory_bytes() const { return order_.size() * 4 + kept_before_.size() * 8; }

  // Whether the holes are built rather than the order, for m records on a
  // domain of `domain` points: when an inversion per hole (scalar, ~16 times
  // a vectorised evaluation) costs less than an evaluation per point.
  static bool builds_holes(std::uint64_t m, std::uint64_t domain) { return (domain - m) * 16 <= domain; }

 private:
  std::uint64_t m_;
  std::vector<std::uint32_t> order_;        // the order, when built
  std::vector<std::uint64_t> kept_before_;  // hole j's point minus j: the records before it, nondecreasing
};

}  // namespace extshuffle::modes
