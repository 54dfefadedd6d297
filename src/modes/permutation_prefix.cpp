#include "permutation_prefix.hpp"

#include <algorithm>
#include <map>
#include <numeric>

#include "extshuffle/core/hypergeometric.hpp"
#include "extshuffle/core/recursive_matrix.hpp"
#include "extshuffle/core/variable_philox.hpp"

namespace extshuffle::modes {
namespace {

// Positions in the output of a bijective shuffle of m records (Mitchell et
// al., Listing 1: output[j] = input[f(i_j)], i_0 < i_1 < ... the domain
// indices with f(i) < m): the input index at each of `positions`, found by
// walking the domain up to the largest position wanted (none when the
// domain is exactly m: then i_j = j).
std::vector<std::uint64_t> shuffled_inputs(const core::VariablePhilox& f, std::uint64_t m,
                                           const std::vector<std::uint64_t>& positions) {
  std::vector<std::uint64_t> inputs(positions.size());
  if (f.domain_size() == m) {
    for (std::size_t q = 0; q < positions.size(); ++q) inputs[q] = f(positions[q]);
    return inputs;
  }
  const std::uint64_t last = *std::max_element(positions.begin(), positions.end());
  std::vector<std::uint64_t> compacted;
  compacted.reserve(last + 1);
  for (std::uint64_t i = 0; compacted.size() <= last; ++i) {
    const std::uint64_t image = f(i);
    if (image < m) compacted.push_back(image);
  }
  for (std::size_t q = 0; q < positions.size(); ++q) inputs[q] = compacted[positions[q]];
  return inputs;
}

// Bucket `b` of a split node, traced back to the chunks: its input is, for
// each chunk i in order, the shuffled positions [row_i[0..b-1] summed, + row_i[b])
// of chunk i. For queries q (positions in the bucket's input, sorted) it finds
// chunk i and the position in chunk i's shuffle, descending the matrix's
// range tree (recursive_matrix.hpp) and drawing colours 0..b of each split on
// the way, exactly as multivariate_hypergeometric() draws them.
class BucketTrace {
 public:
  BucketTrace(std::uint64_t seed, const core::Node& node, std::uint64_t b, const core::PlanConstants& c)
      : seed_(seed), node_(node), b_(b), c_(c) {}

  // chunk[q], position[q] for each query; queries sorted ascending.
  void locate(const std::vector<std::uint64_t>& queries, std::vector<std::uint64_t>& chunk,
              std::vector<std::uint64_t>& position) {
    chunk.resize(queries.size());
    position.resize(queries.size());
    const std::uint64_t p = core::bucket_count(node_.records, c_);
    std::vector<std::uint64_t> sums(b_ + 1);
    for (std::uint64_t j = 0; j <= b_; ++j) sums[j] = core::bucket_records(node_.records, p, j);
    std::vector<std::uint64_t> offsets(queries);
    descend(0, core::chunk_count(node_.records, c_), sums, offsets, 0, queries.size(), chunk, position);
  }

 private:
  // Rows [lo, hi) whose first b + 1 column sums are `sums`; queries
  // [first, end) of `offsets` (offsets within this range's part of bucket b).
  void descend(std::uint64_t lo, std::uint64_t hi, const std::vector<std::uint64_t>& sums,
               std::vector<std::uint64_t>& offsets, std::size_t first, std::size_t end,
               std::vector<std::uint64_t>& chunk, std::vector<std::uint64_t>& position) {
    if (hi - lo == 1) {
      const std::uint64_t before = std::accumulate(sums.begin(), sums.end() - 1, std::uint64_t{0});
      for (std::size_t q = first; q < end; ++q) {
        chunk[q] = lo;
        position[q] = before + offsets[q];
      }
      return;
    }
    // The split of [lo, hi) at mid: its first b + 1 colours, as drawn by
    // multivariate_hypergeometric() from stream (node, kMatrixSplit, mid).
    const std::uint64_t mid = core::row_split(lo, hi);
    core::Stream stream(seed_, core::StreamAddress{node_.id, core::Purpose::kMatrixSplit, mid});
    std::uint64_t draws_left = core::chunk_range_records(node_.records, mid, hi, c_);
    std::uint64_t balls_left = core::chunk_range_records(node_.records, lo, hi, c_);
    std::vector<std::uint64_t> upper(sums.size()), lower(sums.size());
    for (std::size_t j = 0; j < sums.size(); ++j) {
      std::uint64_t x;
      if (draws_left == 0) {
        x = 0;
      } else if (draws_left == balls_left) {
        x = sums[j];
      } else {
        x = core::hypergeometric(draws_left, sums[j], balls_left - sums[j], stream);
      }
      upper[j] = x;
      lower[j] = sums[j] - x;
      draws_left -= x;
      balls_left -= sums[j];
    }
    const std::uint64_t lower_b = lower.back();
    const std::size_t split = static_cast<std::size_t>(
        std::lower_bound(offsets.begin() + first, offsets.begin() + end, lower_b) - offsets.begin());
    for (std::size_t q = split; q < end; ++q) offsets[q] -= lower_b;
    if (first < split) descend(lo, mid, lower, offsets, first, split, chunk, position);
    if (split < end) descend(mid, hi, upper, offsets, split, end, chunk, position);
  }

  std::uint64_t seed_;
  core::Node node_;
  std::uint64_t b_;
  core::PlanConstants c_;
};

// Input positions (within `node`) of the node's first k outputs.
std::vector<std::uint64_t> node_prefix(std::uint64_t seed, const core::Node& node, std::uint64_t k,
                                       const core::PlanConstants& c) {
  const std::uint64_t n = node.records;
  // A leaf: one bijective shuffle; its first k outputs.
  if (core::is_leaf(n, c)) {
    std::vector<std::uint64_t> positions(k);
    std::iota(positions.begin(), positions.end(), std::uint64_t{0});
    return shuffled_inputs(core::shuffle_bijection(seed, {node.id, core::Purpose::kLeafShuffle, 0}, n), n, positions);
  }
  // A split: the buckets' outputs in order, each traced back to its chunks.
  const std::uint64_t p = core::bucket_count(n, c);
  std::vector<std::uint64_t> out;
  out.reserve(k);
  for (std::uint64_t b = 0; b < p && out.size() < k; ++b) {
    const std::uint64_t kb = std::min(core::bucket_records(n, p, b), k - out.size());
    const std::vector<std::uint64_t> queries = node_prefix(seed, core::bucket_node(node, p, b), kb, c);
    // 1. Sorted, so that one descent of the range tree serves all of them.
    std::vector<std::uint32_t> order(queries.size());
    std::iota(order.begin(), order.end(), 0u);
    std::sort(order.begin(), order.end(), [&](std::uint32_t x, std::uint32_t y) { return queries[x] < queries[y]; });
    std::vector<std::uint64_t> sorted(queries.size()), chunk, position;
    for (std::size_t q = 0; q < order.size(); ++q) sorted[q] = queries[order[q]];
    BucketTrace(seed, node, b, c).locate(sorted, chunk, position);
    // 2. Each chunk's shuffle at the positions wanted from it.
    std::map<std::uint64_t, std::vector<std::size_t>> by_chunk;
    for (std::size_t q = 0; q < sorted.size(); ++q) by_chunk[chunk[q]].push_back(q);
    std::vector<std::uint64_t> input(sorted.size());
    for (const auto& [i, members] : by_chunk) {
      const std::uint64_t m = core::chunk_records(n, i, c);
      std::vector<std::uint64_t> wanted;
      for (const std::size_t q : members) wanted.push_back(position[q]);
      const auto inputs =
          shuffled_inputs(core::shuffle_bijection(seed, {node.id, core::Purpose::kChunkShuffle, i}, m), m, wanted);
      for (std::size_t w = 0; w < members.size(); ++w) input[members[w]] = core::chunk_first(i, c) + inputs[w];
    }
    // 3. Back in output order.
    std::vector<std::uint64_t> bucket_out(queries.size());
    for (std::size_t q = 0; q < order.size(); ++q) bucket_out[order[q]] = input[q];
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
