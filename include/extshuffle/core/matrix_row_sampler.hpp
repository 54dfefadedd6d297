// The communication matrix of a split node, one row at a time.
//
// Gustedt's SampMat (section 4) walked forwards: row i (chunk i) is a
// multivariate hypergeometric draw of the chunk's size from an urn whose
// colours are the buckets' remaining capacities, which are then reduced by
// the row (DESIGN.md 2.1, step 1). By Gustedt's Proposition 6 the rows so
// drawn have exactly the joint distribution induced by a uniform permutation,
// and every row sum (chunk size) and column sum (bucket size) is exact.
// Row i draws from Stream(seed, {node, Purpose::kMatrixRow, i}), so a row's
// randomness does not depend on when or where it is sampled; the capacities
// it sees do depend on the rows before it, so rows are sampled in order.
#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "extshuffle/core/multivariate_hypergeometric.hpp"
#include "extshuffle/core/plan.hpp"
#include "extshuffle/core/stream.hpp"

namespace extshuffle::core {

class MatrixRowSampler {
 public:
  // The matrix of `node` with node_records = n records under `constants`:
  // chunk_count(n) rows, bucket_count(n) columns; capacities start at
  // bucket_records(n, p, j). Memory: one uint64 per bucket.
  // Throws std::invalid_argument if n == 0 or check_plan rejects n, and
  // std::out_of_range if the node's row streams are not addressable.
  MatrixRowSampler(std::uint64_t seed, NodeId node, std::uint64_t node_records, const PlanConstants& constants)
      : seed_(seed), node_(node), node_records_(node_records), constants_(constants) {
    if (node_records == 0) throw std::invalid_argument("matrix row sampler: a node needs at least one record");
    check_plan(node_records, constants);
    row_count_ = chunk_count(node_records, constants);
    check_stream_address(StreamAddress{node, Purpose::kMatrixRow, row_count_ - 1});
    const std::uint64_t p = core::bucket_count(node_records, constants);
    remaining_.resize(p);
    for (std::uint64_t j = 0; j < p; ++j) remaining_[j] = bucket_records(node_records, p, j);
  }

  // Samples the next row i = rows_sampled() into `row` (one entry per
  // bucket): sum(row) == chunk_records(n, i), row[j] <= remaining capacity j,
  // and subtracts it from the remaining capacities. Cost: at most one
  // hypergeometric draw per bucket (bench/hypergeometric_bench.cpp,
  // "matrix_row"); no allocation. Throws std::logic_error once all
  // chunk_count(n) rows have been sampled, std::invalid_argument if row.size()
  // != bucket_count(); nothing changes then.
  void next_row(std::span<std::uint64_t> row) {
    if (rows_sampled_ == row_count_) {
      throw std::logic_error("matrix row sampler: all " + std::to_string(row_count_) +
                             " rows have been sampled");
    }
    if (row.size() != remaining_.size()) {
      throw std::invalid_argument("matrix row sampler: row has " + std::to_string(row.size()) +
                                  " entries, the node has " + std::to_string(remaining_.size()) + " buckets");
    }
    // 1. The chunk's size is drawn from the urn of remaining capacities (SampMat, "split").
    Stream stream(seed_, StreamAddress{node_, Purpose::kMatrixRow, rows_sampled_});
    multivariate_hypergeometric(chunk_records(node_records_, rows_sampled_, constants_), remaining_, row,
                                stream);
    // 2. The capacities shrink by the row (SampMat, "update").
    for (std::size_t j = 0; j < remaining_.size(); ++j) remaining_[j] -= row[j];
    ++rows_sampled_;
  }

  std::uint64_t bucket_count() const { return remaining_.size(); }
  std::uint64_t row_count() const { return row_count_; }
  std::uint64_t rows_sampled() const { return rows_sampled_; }
  // Capacity of each bucket not yet filled by the rows sampled so far; all
  // zero after the last row.
  std::span<const std::uint64_t> remaining_capacities() const { return remaining_; }

 private:
  std::uint64_t seed_;
  NodeId node_;
  std::uint64_t node_records_;
  PlanConstants constants_;
  std::uint64_t row_count_ = 0;
  std::uint64_t rows_sampled_ = 0;
  std::vector<std::uint64_t> remaining_;
};

}  // namespace extshuffle::core
