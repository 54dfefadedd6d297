// Bucket b's column of a split node's communication matrix
// (core/recursive_matrix.hpp, permutation version 2) for the addressable
// permutation: for every chunk, where its slice of bucket b lies in its
// shuffle, or, for a few positions of bucket b, their chunks alone.
//
// The bound both work against: a split draws its colours in bucket order
// from one stream (multivariate_hypergeometric), so colour b of any split
// needs colours 0..b of it first. Column b from nothing therefore costs
// (b + 1) draws at each of the R - 1 splits of R chunks; the walk below
// keeps every split's stream and urn between columns so that going on to
// column b + 1 costs R - 1 draws, and the descent draws colours 0..b only at
// the splits above the positions asked for.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "extshuffle/core/plan.hpp"
#include "extshuffle/core/stream.hpp"

namespace extshuffle::modes {

// Throws to abandon a long evaluation (the caller's Ctrl-C); asked between
// pieces of at most about 2^16 draws.
using InterruptPoint = std::function<void()>;

class MatrixColumnWalk {
 public:
  static constexpr std::uint64_t kNoColumn = UINT64_MAX;

  // A split node (at least two chunks). Memory: bytes_per_row() a chunk.
  MatrixColumnWalk(std::uint64_t seed, const core::Node& node, const core::PlanConstants& constants);

  static std::uint64_t bytes_per_row();

  // The column held (kNoColumn before the first walk_to()).
  std::uint64_t column() const { return column_; }

  // Column b: from the one held when it is at most b, else from column 0
  // again. Cost: one draw per split per column walked, on up to `threads`
  // threads for large trees; `interrupt` is asked between columns.
  void walk_to(std::uint64_t b, int threads, const InterruptPoint& interrupt);

  // Of chunk i's shuffled records, before[i] come before its slice of
  // column()'s bucket and count[i] are in it.
  const std::vector<std::uint64_t>& before() const { return before_; }
  const std::vector<std::uint64_t>& count() const { return count_; }

 private:
  // One split of the range tree (pre-order): its stream and urn as the
  // colours so far left them, the current colour's column sum of its range,
  // and its two parts (a split's index, or ~row for a single row).
  struct Split {
    core::Stream stream;
    std::uint64_t draws_left;  // records of the upper part not yet given a colour
    std::uint64_t balls_left;  // records of the range not yet given a colour
    std::uint64_t colour_sum = 0;
    std::int64_t lower = 0, upper = 0;
  };

  std::int64_t build(std::uint64_t lo, std::uint64_t hi, std::uint32_t depth);
  void restart();
  void step(std::uint64_t colour, int threads);
  void draw(std::size_t s);
  void give(std::int64_t part, std::uint64_t sum);

  std::uint64_t seed_;
  core::Node node_;
  core::PlanConstants constants_;
  std::uint64_t buckets_;
  bool parallel_;  // large enough to be walked by subtrees on several threads
  std::vector<Split> splits_;
  std::vector<std::size_t> top_;                               // splits above the subtrees, in pre-order
  std::vector<std::pair<std::size_t, std::size_t>> subtrees_;  // pre-order ranges taken by threads
  std::vector<std::uint64_t> before_, count_;
  std::uint64_t column_ = kNoColumn;
  bool stepping_ = false;
};

// Sorted positions `queries` of bucket b's input (within `node`): the chunk
// each comes from and its position in that chunk's shuffle, by one descent
// of the range tree drawing colours 0..b of the splits visited, as
// multivariate_hypergeometric() draws them. Cost: (b + 1) draws per range
// visited, estimated by descent_ranges().
void locate_in_bucket(std::uint64_t seed, const core::Node& node, const core::PlanConstants& constants, std::uint64_t b,
                      std::span<const std::uint64_t> queries, std::span<std::uint64_t> chunk,
                      std::span<std::uint64_t> position, const InterruptPoint& interrupt);

// About how many ranges of a tree of `rows` rows a descent to `queries`
// sorted positions visits: every range on the way to each, shared near
// the root: q (log2(rows / q) + 2), at most 2 rows.
double descent_ranges(std::uint64_t rows, std::uint64_t queries);

}  // namespace extshuffle::modes
