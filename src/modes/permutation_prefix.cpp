#include "permutation_prefix.hpp"

#include <algorithm>
#include <numeric>

#include "extshuffle/core/recursive_matrix.hpp"
#include "extshuffle/core/variable_philox.hpp"
#include "extshuffle/ioperm/output_sources.hpp"

namespace extshuffle::modes {
namespace {

// Input positions (within `node`) of the node's first k outputs.
std::vector<std::uint64_t> node_prefix(std::uint64_t seed, const core::Node& node, std::uint64_t k,
                                       const core::PlanConstants& c) {
  const std::uint64_t n = node.records;
  // A leaf: one bijective shuffle; its first k outputs.
  if (core::is_leaf(n, c)) {
    std::vector<std::uint64_t> positions(k);
    std::iota(positions.begin(), positions.end(), std::uint64_t{0});
    const auto f = core::shuffle_bijection(seed, {node.id, core::Purpose::kLeafShuffle, 0}, n);
    return ioperm::shuffled_inputs(f, n, positions);
  }
  // A split: the buckets' outputs in order, each traced back to its chunks.
  const std::uint64_t p = core::bucket_count(n, c);
  std::vector<std::uint64_t> out;
  out.reserve(k);
  for (std::uint64_t b = 0; b < p && out.size() < k; ++b) {
    const std::uint64_t kb = std::min(core::bucket_records(n, p, b), k - out.size());
    const std::vector<std::uint64_t> queries = node_prefix(seed, core::bucket_node(node, p, b), kb, c);
    const std::vector<std::uint64_t> bucket_out = ioperm::bucket_sources(seed, node, b, queries, c);
    out.insert(out.end(), bucket_out.begin(), bucket_out.end());
  }
  return out;
}

}  // namespace

std::vector<std::uint64_t> permutation_prefix(std::uint64_t seed, std::uint64_t n, std::uint64_t k,
                                              const core::PlanConstants& constants) {
  core::check_plan(n, constants);
  if (n == 0 || k == 0) return {};
  return node_prefix(seed, core::Node{core::NodeId{0, 0}, n}, std::min(k, n), constants);
}

double permutation_prefix_draws(std::uint64_t n, std::uint64_t k, const core::PlanConstants& c) {
  double draws = 0;
  while (k > 0 && !core::is_leaf(n, c)) {
    const std::uint64_t p = core::bucket_count(n, c);
    const std::uint64_t bucket = core::bucket_records(n, p, 0);
    const double buckets_spanned = 1.0 + static_cast<double>(std::min(k, n)) / static_cast<double>(bucket);
    draws += static_cast<double>(std::min(k, n)) * (core::row_tree_depth(core::chunk_count(n, c)) + 1) *
             buckets_spanned;
    n = bucket;
  }
  return draws + static_cast<double>(std::min(k, n));  // the leaf's bijection, in draws' worth
}

}  // namespace extshuffle::modes
