// An independent oracle for the canonical plan (docs/conventions.md, The canonical plan, The bijective shuffle): the
// permutation P(seed, N) computed the plainest way, with vectors and
// recursion, from core's samplers alone (the multivariate hypergeometric draw
// and the keyed bijection; the matrix's range tree is redone here). It
// shares no code with the library's walk or device back ends, so a bug
// in their scatter, batching, windows or compaction cannot hide on both sides
// of a byte-for-byte comparison. Cost: about 4 bijection evaluations per
// record per level and 8 bytes per record per level of recursion: fine for
// tests, far too slow for production.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "extshuffle/core/multivariate_hypergeometric.hpp"
#include "extshuffle/core/plan.hpp"
#include "extshuffle/core/variable_philox.hpp"

namespace extshuffle::testing {

// The bijective shuffle of Mitchell et al. (section 3, Listing 1): walk the
// domain [0, 2^k) in order and keep the images that fall below n, so
// output[j] = input[f(i_j)] for the indices i_0 < i_1 < ... with f(i) < n.
inline std::vector<std::uint64_t> bijective_shuffle(std::span<const std::uint64_t> input,
                                                    const core::VariablePhilox& f) {
  std::vector<std::uint64_t> output;
  output.reserve(input.size());
  for (std::uint64_t i = 0; i < f.domain_size(); ++i) {
    const std::uint64_t image = f(i);
    if (image < input.size()) output.push_back(input[image]);
  }
  return output;
}

// Gustedt's RecMat as permutation version 2 defines it (docs/design.md):
// rows [lo, hi) with column sums `sums` split at lo + the largest power of two
// below hi - lo; the upper part's sums are MultiVarHyp of its records from
// stream (node, kMatrixSplit, split), the lower part gets the rest. Writes
// rows[i] for i in [lo, hi).
inline void oracle_matrix(std::uint64_t seed, const core::Node& node, const core::PlanConstants& c,
                          std::uint64_t lo, std::uint64_t hi, const std::vector<std::uint64_t>& sums,
                          std::vector<std::vector<std::uint64_t>>& rows) {
  if (hi - lo == 1) {
    rows[lo] = sums;
    return;
  }
  const std::uint64_t mid = lo + std::bit_floor(hi - lo - 1);
  std::uint64_t upper_records = 0;
  for (std::uint64_t i = mid; i < hi; ++i) upper_records += core::chunk_records(node.records, i, c);
  std::vector<std::uint64_t> upper(sums.size()), lower(sums.size());
  core::Stream stream(seed, core::StreamAddress{node.id, core::Purpose::kMatrixSplit, mid});
  core::multivariate_hypergeometric(upper_records, sums, upper, stream);
  for (std::size_t j = 0; j < sums.size(); ++j) lower[j] = sums[j] - upper[j];
  oracle_matrix(seed, node, c, lo, mid, lower, rows);
  oracle_matrix(seed, node, c, mid, hi, upper, rows);
}

// Appends to `order` the node's records (`records`, in the node's input
// order) in the node's output order.
inline void oracle_node(const core::Node& node, std::vector<std::uint64_t> records, std::uint64_t seed,
                        const core::PlanConstants& c, std::vector<std::uint64_t>& order) {
  const std::uint64_t n = node.records;
  if (n == 0) return;
  // A leaf: one bijective shuffle.
  if (core::is_leaf(n, c)) {
    const auto out = bijective_shuffle(records, core::shuffle_bijection(seed, {node.id, core::Purpose::kLeafShuffle, 0}, n));
    order.insert(order.end(), out.begin(), out.end());
    return;
  }
  // A split (Gustedt, IOPerm): 1. the communication matrix, then for each
  // chunk in order 2. the chunk shuffled, 3. its first row[0] records
  // to bucket 0, the next row[1] to bucket 1, ...; 4. each bucket recursively,
  // outputs in bucket order.
  const std::uint64_t p = core::bucket_count(n, c);
  std::vector<std::vector<std::uint64_t>> buckets(p);
  std::vector<std::uint64_t> bucket_sizes(p);
  for (std::uint64_t j = 0; j < p; ++j) bucket_sizes[j] = core::bucket_records(n, p, j);
  std::vector<std::vector<std::uint64_t>> matrix(core::chunk_count(n, c));
  oracle_matrix(seed, node, c, 0, matrix.size(), bucket_sizes, matrix);
  for (std::uint64_t i = 0; i < core::chunk_count(n, c); ++i) {
    const std::uint64_t m = core::chunk_records(n, i, c);
    const std::vector<std::uint64_t>& row = matrix[i];
    const auto shuffled =
        bijective_shuffle(std::span<const std::uint64_t>(records).subspan(core::chunk_first(i, c), m),
                          core::shuffle_bijection(seed, {node.id, core::Purpose::kChunkShuffle, i}, m));
    std::uint64_t at = 0;
    for (std::uint64_t j = 0; j < p; ++j) {
      buckets[j].insert(buckets[j].end(), shuffled.begin() + at, shuffled.begin() + at + row[j]);
      at += row[j];
    }
  }
  records.clear();
  records.shrink_to_fit();
  for (std::uint64_t j = 0; j < p; ++j) oracle_node(core::bucket_node(node, p, j), std::move(buckets[j]), seed, c, order);
}

// order[k] = the input index of the record at output position k under P(seed, n).
inline std::vector<std::uint64_t> oracle_order(std::uint64_t n, std::uint64_t seed, const core::PlanConstants& c) {
  std::vector<std::uint64_t> records(n);
  for (std::uint64_t k = 0; k < n; ++k) records[k] = k;
  std::vector<std::uint64_t> order;
  order.reserve(n);
  oracle_node(core::Node{core::NodeId{0, 0}, n}, std::move(records), seed, c, order);
  return order;
}

// Fixed-size records of `input` (record_size bytes each) in the order P(seed, N).
inline std::vector<std::byte> oracle_shuffle(std::span<const std::byte> input, std::size_t record_size,
                                             std::uint64_t seed, const core::PlanConstants& c) {
  const std::uint64_t n = input.size() / record_size;
  const auto order = oracle_order(n, seed, c);
  std::vector<std::byte> output(input.size());
  for (std::uint64_t k = 0; k < n; ++k) {
    std::memcpy(output.data() + k * record_size, input.data() + order[k] * record_size, record_size);
  }
  return output;
}

}  // namespace extshuffle::testing
