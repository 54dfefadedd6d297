// The rows of a split node's communication matrix (Gustedt, RecMat): the
// walk's one door to core's recursive matrix, so that a change of how rows
// are drawn changes this file alone.
#pragma once

#include <algorithm>
#include <cstdint>
#include <exception>
#include <span>
#include <vector>

#include "extshuffle/core/plan.hpp"
#include "extshuffle/core/recursive_matrix.hpp"

namespace extshuffle::ioperm {

// The rows of consecutive chunk groups of one node, each group's rows on
// request (on any one thread at a time): consecutive groups share the
// matrix's path cache, so a whole node costs about its R - 1 splits.
class ChunkRows {
 public:
  ChunkRows(std::uint64_t seed, const core::Node& node, const core::PlanConstants& constants)
      : matrix_(seed, node.id, node.records, constants) {}
  // rows[(i - first) * p + j] for chunks i in [first, end), p = bucket_count().
  void draw(std::uint64_t first, std::uint64_t end, std::vector<std::uint64_t>& rows) {
    rows.resize((end - first) * matrix_.bucket_count());
    matrix_.rows(first, end, rows);
  }
  std::uint64_t bucket_count() const { return matrix_.bucket_count(); }
  // How many records the chunks before `first` put in each bucket.
  void column_sums_before(std::uint64_t first, std::vector<std::uint64_t>& sums) {
    sums.resize(matrix_.bucket_count());
    matrix_.column_sums_before(first, sums);
  }

 private:
  core::RecursiveMatrix matrix_;
};

// Every row of the node's matrix, rows[i * p + j] (p = bucket_count), drawn
// on up to `threads` threads, each its own range of rows (the values do not
// depend on the split: each range draws its own path).
inline std::vector<std::uint64_t> sample_matrix(std::uint64_t seed, const core::Node& node,
                                                const core::PlanConstants& constants, int threads) {
  const std::uint64_t chunks = core::chunk_count(node.records, constants);
  const std::uint64_t p = core::bucket_count(node.records, constants);
  std::vector<std::uint64_t> rows(chunks * p);
  // A range of fewer than 64 rows is not worth a thread's start and its path.
  const std::int64_t parts = static_cast<std::int64_t>(
      std::clamp<std::uint64_t>(chunks / 64, 1, static_cast<std::uint64_t>(std::max(threads, 1))));
  std::exception_ptr failure;
#pragma omp parallel for schedule(static) num_threads(static_cast<int>(parts)) if (parts > 1)
  for (std::int64_t t = 0; t < parts; ++t) {
    try {
      const std::uint64_t first = chunks * static_cast<std::uint64_t>(t) / static_cast<std::uint64_t>(parts);
      const std::uint64_t end = chunks * static_cast<std::uint64_t>(t + 1) / static_cast<std::uint64_t>(parts);
      core::RecursiveMatrix matrix(seed, node.id, node.records, constants);
      matrix.rows(first, end, std::span<std::uint64_t>(rows.data() + first * p, (end - first) * p));
    } catch (...) {
#pragma omp critical(extshuffle_sample_matrix_failure)
      if (!failure) failure = std::current_exception();
    }
  }
  if (failure) std::rethrow_exception(failure);
  return rows;
}

}  // namespace extshuffle::ioperm
