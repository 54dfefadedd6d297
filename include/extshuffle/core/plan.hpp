// The canonical plan: Gustedt's IOPerm with its memory parameter replaced by
// fixed constants, so the structure of the permutation depends on N alone
// (docs/conventions.md, The canonical plan). Pure arithmetic; the walk decides where nodes run.
#pragma once

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "extshuffle/core/host_device.hpp"
#include "extshuffle/core/stream.hpp"

namespace extshuffle::core {

inline constexpr int kPermutationVersion = 2;

struct PlanConstants {
  std::uint64_t leaf_records;  // L: a node of at most L records is a leaf; chunks hold L records
  std::uint64_t max_fanout;    // F: a split node has at most F buckets
};

// Constants of permutation versions 1 and 2 (version 2 changed only how the
// communication matrix is drawn), chosen by bench/shuffle_bench (the
// in-memory plan for L in 2^14..2^20 and F in 2^6..2^12; raw results in
// bench/results/plan_constants.txt) and bench/hypergeometric_bench (a
// matrix row's cost per record): docs/benchmarks.md, "Choosing L and F". Changing them changes every
// permutation: that would be a new permutation version.
inline constexpr PlanConstants kPlanV2{std::uint64_t{1} << 20, std::uint64_t{1} << 10};

// Throws std::invalid_argument unless L >= 1, F >= 2 and N fits the stream
// address space (first output position < 2^56, chunk index < 2^32).
inline void check_plan(std::uint64_t n, const PlanConstants& c) {
  if (c.leaf_records < 1 || c.max_fanout < 2) {
    throw std::invalid_argument("plan constants need leaf_records >= 1 and max_fanout >= 2");
  }
  if (n > kMaxNodeFirst + 1 || (n > 0 && (n - 1) / c.leaf_records > kMaxStreamIndex)) {
    throw std::invalid_argument("record count " + std::to_string(n) +
                                " exceeds what permutation version " + std::to_string(kPermutationVersion) + " addresses");
  }
}

struct Node {
  NodeId id;
  std::uint64_t records = 0;
};

EXTSHUFFLE_HOST_DEVICE inline bool is_leaf(std::uint64_t n, const PlanConstants& c) {
  return n <= c.leaf_records;
}

// Input chunks of a split node: L consecutive records each, the last may be shorter.
EXTSHUFFLE_HOST_DEVICE inline std::uint64_t chunk_count(std::uint64_t n, const PlanConstants& c) {
  return (n + c.leaf_records - 1) / c.leaf_records;
}
EXTSHUFFLE_HOST_DEVICE inline std::uint64_t chunk_first(std::uint64_t i, const PlanConstants& c) {
  return i * c.leaf_records;
}
EXTSHUFFLE_HOST_DEVICE inline std::uint64_t chunk_records(std::uint64_t n, std::uint64_t i,
                                                          const PlanConstants& c) {
  const std::uint64_t first = i * c.leaf_records;
  return n - first < c.leaf_records ? n - first : c.leaf_records;
}

// Output buckets of a split node: p' = min(ceil(n / L), F) of near-equal size;
// the first n mod p' buckets hold one record more.
EXTSHUFFLE_HOST_DEVICE inline std::uint64_t bucket_count(std::uint64_t n, const PlanConstants& c) {
  const std::uint64_t chunks = chunk_count(n, c);
  return chunks < c.max_fanout ? chunks : c.max_fanout;
}
EXTSHUFFLE_HOST_DEVICE inline std::uint64_t bucket_records(std::uint64_t n, std::uint64_t p,
                                                           std::uint64_t j) {
  return n / p + (j < n % p ? 1 : 0);
}
EXTSHUFFLE_HOST_DEVICE inline std::uint64_t bucket_first(std::uint64_t n, std::uint64_t p,
                                                         std::uint64_t j) {
  const std::uint64_t extra = n % p;
  return j * (n / p) + (j < extra ? j : extra);
}

// The node that bucket j of `parent` becomes.
EXTSHUFFLE_HOST_DEVICE inline Node bucket_node(const Node& parent, std::uint64_t p,
                                               std::uint64_t j) {
  return Node{NodeId{parent.id.depth + 1, parent.id.first + bucket_first(parent.records, p, j)},
              bucket_records(parent.records, p, j)};
}

// Number of levels of the plan for n records: 1 for a single leaf.
inline std::uint32_t plan_levels(std::uint64_t n, const PlanConstants& c) {
  std::uint32_t levels = 1;
  while (!is_leaf(n, c)) {
    const std::uint64_t p = bucket_count(n, c);
    n = bucket_records(n, p, 0);  // bucket 0 is the largest
    ++levels;
  }
  return levels;
}

}  // namespace extshuffle::core
