// Waechter et al., "Is your permutation algorithm unbiased for n != 2^m?":
// the butterfly permutation network (section 3, Fig. 1), its two
// generalisations to arbitrary n (3.2: padding to the next power of two and
// compacting, or omitting the exchanges that involve missing elements),
// iterating it (section 4) and circular shifting between iterations
// (section 5). Both sampled (one random bit per exchange) and exact (the
// position matrix M_n, p_ij = P(record j ends at position i)).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "extshuffle/core/stream.hpp"

namespace permlab {

enum class ButterflyVariant { kPadded, kOmitted };

// "padded" or "omitted"; throws std::invalid_argument otherwise.
ButterflyVariant parse_butterfly_variant(const std::string& name);
std::string to_string(ButterflyVariant variant);

// One random exchange: the records at positions a < b swap with probability 1/2.
struct Exchange {
  std::uint32_t a;
  std::uint32_t b;
};

// The smallest power of two >= n (the network's width).
std::uint64_t butterfly_width(std::uint64_t n);

// The exchanges of one pass in network order. For width N = 2^m, stage
// s = 0..m-1 exchanges i and i + 2^s for every i with bit s clear: the
// recursion of Fig. 1 (permute both halves, then exchange i with i + N/2),
// unrolled. kPadded: all N/2 * m exchanges over N slots; kOmitted: only those
// with both ends < n (Fig. 2).
std::vector<Exchange> butterfly_exchanges(std::uint64_t n, ButterflyVariant variant);

// A square matrix of doubles, row-major: at(i, j) is row i, column j.
struct SquareMatrix {
  std::size_t n = 0;
  std::vector<double> values;
  SquareMatrix() = default;
  explicit SquareMatrix(std::size_t size, double fill = 0.0) : n(size), values(size * size, fill) {}
  double& at(std::size_t i, std::size_t j) { return values[i * n + j]; }
  double at(std::size_t i, std::size_t j) const { return values[i * n + j]; }
};

SquareMatrix identity_matrix(std::size_t n);
// a * b; cost n^3 multiply-adds.
SquareMatrix multiply(const SquareMatrix& a, const SquareMatrix& b);
// S_l * m: row i of the result is row (i - l) mod n of m (Waechter 5: the
// record at position p moves to (p + l) mod n).
SquareMatrix shift_rows(const SquareMatrix& m, std::uint64_t offset);
// (S_l * m)^k: the position matrix of k independent passes, each followed by
// a circular shift by l (l = 0: plain iterating, section 4). k >= 1.
SquareMatrix iterate(const SquareMatrix& m, int iterations, std::uint64_t offset = 0);
// Waechter's bias B(M) = (1/n) sum_ij |M(i,j) - 1/n|: 0 for a uniform
// position matrix, at most 2 (n - 1) / n for a fixed permutation.
double bias(const SquareMatrix& m);

// The exact position matrix of one pass for n records. kOmitted: propagated
// exactly (each fair exchange replaces rows a and b by their mean), cost
// O(n^2 log n). kPadded: the compaction makes a record's final position
// depend on where the padding went, so it is computed by enumerating all
// 2^E exchange patterns; throws std::invalid_argument unless E <= 20
// (n <= 8; the n > 8 matrices are only available sampled).
SquareMatrix butterfly_position_matrix(std::uint64_t n, ButterflyVariant variant);
// The same by enumerating all exchange patterns, for either variant (E <= 20):
// the independent check of the propagation used in tests.
SquareMatrix butterfly_position_matrix_enumerated(std::uint64_t n, ButterflyVariant variant);

// The offset l in [0, n) minimising B((S_l M)^k), the smallest on ties;
// cost n * (k - 1) matrix products.
std::uint64_t best_shift_offset(const SquareMatrix& m, int iterations);

// Shuffles by `iterations` passes of the network, each followed by a circular
// shift by `shift_offset`, with the exchange bits drawn 32 at a time from the
// stream in network order. order must hold the n records to permute.
class ButterflyShuffler {
 public:
  ButterflyShuffler(std::uint64_t n, ButterflyVariant variant, int iterations, std::uint64_t shift_offset);
  void shuffle(extshuffle::core::Stream& bits, std::span<std::uint32_t> order);

 private:
  std::uint64_t n_;
  std::uint64_t width_;
  ButterflyVariant variant_;
  int iterations_;
  std::uint64_t shift_offset_;
  std::vector<Exchange> exchanges_;
  std::vector<std::uint32_t> slots_;  // width_ slots for the padded variant
  std::vector<std::uint32_t> shifted_;
};

}  // namespace permlab
