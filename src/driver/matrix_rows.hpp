// The rows of a split node's communication matrix (Gustedt, SampMat): the
// driver's one door to core's row sampler, so that a change of how rows are
// drawn (permutation version 2's recursive halving, Gustedt's RecMat)
// changes this file alone.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "extshuffle/core/matrix_row_sampler.hpp"
#include "extshuffle/core/plan.hpp"

namespace extshuffle::driver {

// Row i of the node's matrix for each chunk i, in chunk order: how many of
// the chunk's shuffled records go to each bucket, in bucket order.
class ChunkRows {
 public:
  ChunkRows(std::uint64_t seed, const core::Node& node, const core::PlanConstants& constants)
      : sampler_(seed, node.id, node.records, constants) {}
  // The next chunk's row; row.size() is the node's bucket count.
  void next(std::span<std::uint64_t> row) { sampler_.next_row(row); }

 private:
  core::MatrixRowSampler sampler_;
};

// Every row of the node's matrix: rows[i * p + j] (p = bucket_count).
inline std::vector<std::uint64_t> sample_matrix(std::uint64_t seed, const core::Node& node,
                                                const core::PlanConstants& constants) {
  const std::uint64_t chunks = core::chunk_count(node.records, constants);
  const std::uint64_t p = core::bucket_count(node.records, constants);
  std::vector<std::uint64_t> rows(chunks * p);
  ChunkRows source(seed, node, constants);
  for (std::uint64_t i = 0; i < chunks; ++i) source.next(std::span<std::uint64_t>(rows.data() + i * p, p));
  return rows;
}

}  // namespace extshuffle::driver
