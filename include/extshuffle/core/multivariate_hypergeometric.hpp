// Multivariate hypergeometric sampling: Gustedt's MultiVarHyp (section 4).
//
// Draw `draws` balls without replacement from an urn holding colour_counts[j]
// balls of colour j; out[j] = how many of the draws have colour j. One row of
// the communication matrix is exactly this draw (docs/conventions.md, The canonical plan, step 1).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>

#include "extshuffle/core/hypergeometric.hpp"
#include "extshuffle/core/stream.hpp"

namespace extshuffle::core {

// Fills out[j] with the number of draws of colour j: sum(out) == draws and
// out[j] <= colour_counts[j] exactly. Sequential conditional decomposition
// (Gustedt, MultiVarHyp; his Proposition 6 with one colour split off at a
// time): given the draws left r and the balls left R, colour j gets
// h(r, c_j, R - c_j) and the rest of the urn the remaining r - x_j.
// Colours are visited in index order, so the result depends on that order
// (part of the permutation through the matrix's splits).
// Cost: at most one hypergeometric draw per colour (~100 ns each), fewer when
// the draws run out (the remaining colours get 0) or when the draws left equal
// the balls left (the remaining colours are taken whole); no allocation.
// Throws std::invalid_argument if out and colour_counts differ in size, if
// the counts add up to more than 2^63, or if draws exceeds their sum; out is
// untouched then.
inline void multivariate_hypergeometric(std::uint64_t draws, std::span<const std::uint64_t> colour_counts,
                                        std::span<std::uint64_t> out, Stream& stream) {
  if (out.size() != colour_counts.size()) {
    throw std::invalid_argument("multivariate_hypergeometric: " + std::to_string(colour_counts.size()) +
                                " colours but room for " + std::to_string(out.size()));
  }
  std::uint64_t total = 0;
  for (const std::uint64_t count : colour_counts) {
    if (count > kMaxHypergeometricTotal - total) {
      throw std::invalid_argument("multivariate_hypergeometric: urn exceeds 2^63 balls");
    }
    total += count;
  }
  if (draws > total) {
    throw std::invalid_argument("multivariate_hypergeometric: " + std::to_string(draws) +
                                " draws from an urn of " + std::to_string(total) + " balls");
  }
  std::uint64_t draws_left = draws;
  std::uint64_t balls_left = total;
  for (std::size_t j = 0; j < colour_counts.size(); ++j) {
    const std::uint64_t count = colour_counts[j];
    std::uint64_t x;
    if (draws_left == 0) {
      x = 0;  // nothing left to place
    } else if (draws_left == balls_left) {
      x = count;  // the rest of the urn is taken whole
    } else {
      x = hypergeometric(draws_left, count, balls_left - count, stream);
    }
    out[j] = x;
    draws_left -= x;
    balls_left -= count;
  }
}

}  // namespace extshuffle::core
