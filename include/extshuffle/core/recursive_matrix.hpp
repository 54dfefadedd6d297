// The communication matrix of a split node, any range of rows at a time:
// Gustedt's RecMat (section 4), the matrix of permutation version 2.
//
// The rows (chunks) [0, R) of a node form a binary tree of ranges. A range
// [lo, hi) with two or more rows is split at row_split(lo, hi); the column
// sums of its upper part [mid, hi) are one multivariate hypergeometric draw
// of that part's record count from the range's column sums, and the lower
// part [lo, mid) gets the rest. The root's column sums are the bucket sizes; a
// range of one row is that row. By Gustedt's Proposition 6 (applied at every
// split) the matrix has exactly the distribution induced by a uniform
// permutation, as SampMat's row-by-row draw did in version 1, with the same
// number of draws: R - 1 splits of at most F hypergeometric draws each.
//
// Split [lo, hi) at mid draws from Stream(seed, {node, kMatrixSplit, mid}).
// Every row boundary 1..R-1 is the split point of exactly one range of the
// tree, so the addresses are distinct. The rows of [first, end) need only the
// splits on the paths from the root to that range and those inside it:
// O(log R + (end - first)) draws, whatever `first` is. That is what lets
// threads, GPUs and MPI ranks each draw their own rows (docs/design.md).
//
// The tree arithmetic is host+device; the draws (hypergeometric.hpp) run on
// the host, where their libm is the one the golden hashes pin.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "extshuffle/core/host_device.hpp"
#include "extshuffle/core/multivariate_hypergeometric.hpp"
#include "extshuffle/core/plan.hpp"
#include "extshuffle/core/stream.hpp"

namespace extshuffle::core {

// The split point of the row range [lo, hi), hi - lo >= 2: lo plus the
// largest power of two below hi - lo. It depends on the range alone (so on
// the node's chunk count alone, never on threads, memory or machines), and
// ranges starting at a multiple of a power of two that long are whole
// subtrees, so aligned chunk groups cost no partial splits.
EXTSHUFFLE_HOST_DEVICE inline std::uint64_t row_split(std::uint64_t lo, std::uint64_t hi) {
  std::uint64_t lower_rows = 1;
  while (lower_rows * 2 < hi - lo) lower_rows *= 2;
  return lo + lower_rows;
}

// Records in chunks [lo, hi) of a node of n records (lo < hi <= chunk_count).
EXTSHUFFLE_HOST_DEVICE inline std::uint64_t chunk_range_records(std::uint64_t n, std::uint64_t lo, std::uint64_t hi,
                                                                const PlanConstants& c) {
  const std::uint64_t end = hi == chunk_count(n, c) ? n : chunk_first(hi, c);
  return end - chunk_first(lo, c);
}

// Depth of the range tree of `rows` rows: the longest root-to-row path.
EXTSHUFFLE_HOST_DEVICE inline std::uint32_t row_tree_depth(std::uint64_t rows) {
  std::uint32_t depth = 0;
  while ((std::uint64_t{1} << depth) < rows) ++depth;
  return depth;
}

class RecursiveMatrix {
 public:
  // The matrix of `node` (node_records = n): chunk_count(n) rows,
  // bucket_count(n) columns. Memory: 2 x (tree depth + 1) x bucket_count
  // uint64s (~0.5 MiB at 2^32 rows and 2^10 buckets).
  // Throws std::invalid_argument if n == 0 or check_plan rejects n, and
  // std::out_of_range if the node's split streams are not addressable.
  RecursiveMatrix(std::uint64_t seed, NodeId node, std::uint64_t node_records, const PlanConstants& constants)
      : seed_(seed), node_(node), node_records_(node_records), constants_(constants) {
    if (node_records == 0) throw std::invalid_argument("recursive matrix: a node needs at least one record");
    check_plan(node_records, constants);
    row_count_ = chunk_count(node_records, constants);
    check_stream_address(StreamAddress{node, Purpose::kMatrixSplit, row_count_ - 1});
    const std::uint64_t p = core::bucket_count(node_records, constants);
    root_sums_.resize(p);
    for (std::uint64_t j = 0; j < p; ++j) root_sums_[j] = bucket_records(node_records, p, j);
    levels_.resize(row_tree_depth(row_count_));
    for (Level& level : levels_) {
      level.lower.resize(p);
      level.upper.resize(p);
    }
  }

  std::uint64_t row_count() const { return row_count_; }
  std::uint64_t bucket_count() const { return root_sums_.size(); }

  // Writes rows [first, end) to out, row-major: out[(i - first) * p + j] is
  // how many of chunk i's shuffled records go to bucket j. Row i sums to
  // chunk_records(n, i); column sums over all rows are the bucket sizes.
  // The split drawn last at each depth is kept: ranges at one depth are
  // disjoint, so a kept (lo, hi) is that range's own draw and consecutive
  // calls share their common path. The result never depends on earlier calls.
  // Throws std::out_of_range unless first < end <= row_count(), and
  // std::invalid_argument unless out.size() == (end - first) * p.
  void rows(std::uint64_t first, std::uint64_t end, std::span<std::uint64_t> out) {
    if (first >= end || end > row_count_) {
      throw std::out_of_range("recursive matrix: rows [" + std::to_string(first) + ", " + std::to_string(end) +
                              ") of a matrix of " + std::to_string(row_count_) + " rows");
    }
    if (out.size() != (end - first) * bucket_count()) {
      throw std::invalid_argument("recursive matrix: room for " + std::to_string(out.size()) + " entries, " +
                                  std::to_string(end - first) + " rows of " + std::to_string(bucket_count()) +
                                  " need " + std::to_string((end - first) * bucket_count()));
    }
    visit(0, row_count_, root_sums_.data(), 0, first, end, out.data());
  }

  // Writes the column sums of rows [0, first) to out (p entries): how many
  // records of the chunks before `first` each bucket receives, so that a
  // split that starts at chunk `first` knows where its records land in each
  // bucket. Draws only the splits on the root-to-`first` path (those rows()
  // of a range starting at `first` draws anyway). first == row_count() gives
  // the bucket sizes. Throws std::out_of_range if first > row_count(), and
  // std::invalid_argument unless out.size() == p.
  void column_sums_before(std::uint64_t first, std::span<std::uint64_t> out) {
    const std::size_t p = root_sums_.size();
    if (first > row_count_) throw std::out_of_range("recursive matrix: rows before " + std::to_string(first));
    if (out.size() != p) throw std::invalid_argument("recursive matrix: column sums need one entry a bucket");
    if (first == row_count_) {
      std::copy(root_sums_.begin(), root_sums_.end(), out.begin());
      return;
    }
    std::fill(out.begin(), out.end(), 0);
    std::uint64_t lo = 0, hi = row_count_;
    const std::uint64_t* sums = root_sums_.data();
    for (std::uint32_t depth = 0; first > lo && hi - lo > 1; ++depth) {
      const std::uint64_t mid = row_split(lo, hi);
      const Level& level = split(lo, hi, mid, sums, depth);
      if (first >= mid) {
        for (std::size_t j = 0; j < p; ++j) out[j] += level.lower[j];  // [lo, mid) lies wholly before first
        lo = mid;
        sums = level.upper.data();
      } else {
        hi = mid;
        sums = level.lower.data();
      }
    }
  }

  // Multivariate hypergeometric draws (splits) made so far by this object.
  std::uint64_t splits_drawn() const { return splits_drawn_; }

 private:
  struct Level {
    std::uint64_t lo = 0, hi = 0;  // the range whose split is kept; hi == 0: none yet
    std::vector<std::uint64_t> lower, upper;
  };

  // The split of range [lo, hi) at `depth` (column sums `sums`), drawn
  // unless it is the one kept at that depth.
  const Level& split(std::uint64_t lo, std::uint64_t hi, std::uint64_t mid, const std::uint64_t* sums,
                     std::uint32_t depth) {
    const std::size_t p = root_sums_.size();
    Level& level = levels_[depth];
    if (level.lo != lo || level.hi != hi) {
      // The upper part's column sums are drawn, the lower part's follow.
      Stream stream(seed_, StreamAddress{node_, Purpose::kMatrixSplit, mid});
      multivariate_hypergeometric(chunk_range_records(node_records_, mid, hi, constants_),
                                  std::span<const std::uint64_t>(sums, p), level.upper, stream);
      for (std::size_t j = 0; j < p; ++j) level.lower[j] = sums[j] - level.upper[j];
      level.lo = lo;
      level.hi = hi;
      ++splits_drawn_;
    }
    return level;
  }

  // Range [lo, hi) at `depth`, with column sums `sums`, restricted to the
  // wanted rows [first, end), which it intersects.
  void visit(std::uint64_t lo, std::uint64_t hi, const std::uint64_t* sums, std::uint32_t depth, std::uint64_t first,
             std::uint64_t end, std::uint64_t* out) {
    const std::size_t p = root_sums_.size();
    if (hi - lo == 1) {
      std::copy(sums, sums + p, out + (lo - first) * p);
      return;
    }
    const std::uint64_t mid = row_split(lo, hi);
    const Level& level = split(lo, hi, mid, sums, depth);
    if (first < mid) visit(lo, mid, level.lower.data(), depth + 1, first, end, out);
    if (end > mid) visit(mid, hi, level.upper.data(), depth + 1, first, end, out);
  }

  std::uint64_t seed_;
  NodeId node_;
  std::uint64_t node_records_;
  PlanConstants constants_;
  std::uint64_t row_count_ = 0;
  std::vector<std::uint64_t> root_sums_;
  std::vector<Level> levels_;
  std::uint64_t splits_drawn_ = 0;
};

}  // namespace extshuffle::core
