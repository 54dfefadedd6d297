// Tracing output positions back through the plan (output_sources.hpp).
#include "extshuffle/ioperm/output_sources.hpp"

#include <algorithm>
#include <map>
#include <numeric>
#include <stdexcept>

#include "extshuffle/core/hypergeometric.hpp"
#include "extshuffle/core/recursive_matrix.hpp"

namespace extshuffle::ioperm {
namespace {

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
    std::vector<std::uint64_t> offsets(queries);
    descend(0, core::chunk_count(node_.records, c_), first_sums(), offsets, 0, queries.size(), chunk, position);
  }

  // The whole column b: chunk i gives the bucket positions [before[i],
  // before[i] + count[i]) of its shuffle. Cost: every split of the tree,
  // colours 0..b each (2 R (b + 1) draws for R chunks): for few chunks,
  // cheaper than sorting the queries of a whole bucket.
  void column(std::vector<std::uint64_t>& before, std::vector<std::uint64_t>& count) {
    const std::uint64_t chunks = core::chunk_count(node_.records, c_);
    before.assign(chunks, 0);
    count.assign(chunks, 0);
    descend_all(0, chunks, first_sums(), before, count);
  }

 private:
  // Bucket 0..b's records: the column sums of all the rows.
  std::vector<std::uint64_t> first_sums() const {
    const std::uint64_t p = core::bucket_count(node_.records, c_);
    std::vector<std::uint64_t> sums(b_ + 1);
    for (std::uint64_t j = 0; j <= b_; ++j) sums[j] = core::bucket_records(node_.records, p, j);
    return sums;
  }

  void descend_all(std::uint64_t lo, std::uint64_t hi, const std::vector<std::uint64_t>& sums,
                   std::vector<std::uint64_t>& before, std::vector<std::uint64_t>& count) {
    if (hi - lo == 1) {
      before[lo] = std::accumulate(sums.begin(), sums.end() - 1, std::uint64_t{0});
      count[lo] = sums.back();
      return;
    }
    std::vector<std::uint64_t> lower, upper;
    const std::uint64_t mid = split(lo, hi, sums, lower, upper);
    descend_all(lo, mid, lower, before, count);
    descend_all(mid, hi, upper, before, count);
  }

  // The split of [lo, hi) at its mid (returned): its first b + 1 colours, as
  // drawn by multivariate_hypergeometric() from stream (node, kMatrixSplit, mid).
  std::uint64_t split(std::uint64_t lo, std::uint64_t hi, const std::vector<std::uint64_t>& sums,
                      std::vector<std::uint64_t>& lower, std::vector<std::uint64_t>& upper) const {
    const std::uint64_t mid = core::row_split(lo, hi);
    core::Stream stream(seed_, core::StreamAddress{node_.id, core::Purpose::kMatrixSplit, mid});
    std::uint64_t draws_left = core::chunk_range_records(node_.records, mid, hi, c_);
    std::uint64_t balls_left = core::chunk_range_records(node_.records, lo, hi, c_);
    upper.resize(sums.size());
    lower.resize(sums.size());
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
    return mid;
  }

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
    std::vector<std::uint64_t> lower, upper;
    const std::uint64_t mid = split(lo, hi, sums, lower, upper);
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

// bucket_sources() for a node of few chunks: the whole column b drawn
// once, each query's chunk found by binary search, grouped by chunk by
// counting: no sort of the queries, no map.
std::vector<std::uint64_t> column_sources(std::uint64_t seed, const core::Node& node, std::uint64_t b,
                                          const std::vector<std::uint64_t>& queries, const core::PlanConstants& c) {
  std::vector<std::uint64_t> before, count;
  BucketTrace(seed, node, b, c).column(before, count);
  const std::size_t chunks = count.size();
  std::vector<std::uint64_t> start(chunks + 1, 0);  // where chunk i's part of the bucket begins
  for (std::size_t i = 0; i < chunks; ++i) start[i + 1] = start[i] + count[i];
  std::vector<std::uint32_t> chunk_of(queries.size());
  std::vector<std::size_t> members_first(chunks + 1, 0);
  for (std::size_t q = 0; q < queries.size(); ++q) {
    const auto after = std::upper_bound(start.begin(), start.end(), queries[q]);
    chunk_of[q] = static_cast<std::uint32_t>(after - start.begin() - 1);
    ++members_first[chunk_of[q] + 1];
  }
  for (std::size_t i = 0; i < chunks; ++i) members_first[i + 1] += members_first[i];
  std::vector<std::size_t> members(queries.size());
  std::vector<std::size_t> fill(members_first.begin(), members_first.end() - 1);
  for (std::size_t q = 0; q < queries.size(); ++q) members[fill[chunk_of[q]]++] = q;
  std::vector<std::uint64_t> out(queries.size());
  std::vector<std::uint64_t> wanted;
  for (std::size_t i = 0; i < chunks; ++i) {
    if (members_first[i] == members_first[i + 1]) continue;
    wanted.clear();
    for (std::size_t k = members_first[i]; k < members_first[i + 1]; ++k) {
      wanted.push_back(before[i] + queries[members[k]] - start[i]);
    }
    const std::uint64_t m = core::chunk_records(node.records, i, c);
    const auto inputs =
        shuffled_inputs(core::shuffle_bijection(seed, {node.id, core::Purpose::kChunkShuffle, i}, m), m, wanted);
    for (std::size_t k = members_first[i]; k < members_first[i + 1]; ++k) {
      out[members[k]] = core::chunk_first(i, c) + inputs[k - members_first[i]];
    }
  }
  return out;
}

}  // namespace

std::vector<std::uint64_t> shuffled_inputs(const core::VariablePhilox& f, std::uint64_t m,
                                           const std::vector<std::uint64_t>& positions) {
  std::vector<std::uint64_t> inputs(positions.size());
  if (f.domain_size() == m) {
    for (std::size_t q = 0; q < positions.size(); ++q) inputs[q] = f(positions[q]);
    return inputs;
  }
  if (positions.empty()) return inputs;
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


std::vector<std::uint64_t> bucket_sources(std::uint64_t seed, const core::Node& node, std::uint64_t b,
                                          const std::vector<std::uint64_t>& queries, const core::PlanConstants& c) {
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
    const std::uint64_t m = core::chunk_records(node.records, i, c);
    std::vector<std::uint64_t> wanted;
    wanted.reserve(members.size());
    for (const std::size_t q : members) wanted.push_back(position[q]);
    const auto inputs =
        shuffled_inputs(core::shuffle_bijection(seed, {node.id, core::Purpose::kChunkShuffle, i}, m), m, wanted);
    for (std::size_t w = 0; w < members.size(); ++w) input[members[w]] = core::chunk_first(i, c) + inputs[w];
  }
  // 3. Back in the queries' order.
  std::vector<std::uint64_t> out(queries.size());
  for (std::size_t q = 0; q < order.size(); ++q) out[order[q]] = input[q];
  return out;
}

RootSources::RootSources(std::uint64_t seed, std::uint64_t n, const core::PlanConstants& constants)
    : seed_(seed), root_{core::NodeId{0, 0}, n}, constants_(constants), leaf_(core::is_leaf(n, constants)) {
  core::check_plan(n, constants);
  if (core::plan_levels(n, constants) > 2) {
    throw std::invalid_argument("a root of " + std::to_string(n) + " records has more than two plan levels");
  }
  buckets_ = leaf_ ? 1 : core::bucket_count(n, constants);
  domain_first_.assign(buckets_ + 1, 0);
  for (std::uint64_t j = 0; j < buckets_; ++j) domain_first_[j + 1] = domain_first_[j] + bijection(j).domain_size();
}

core::VariablePhilox RootSources::bijection(std::uint64_t j) const {
  const core::Node node = leaf_ ? root_ : core::bucket_node(root_, buckets_, j);
  return core::shuffle_bijection(seed_, {node.id, core::Purpose::kLeafShuffle, 0}, node.records);
}

std::vector<std::uint64_t> RootSources::sources(std::uint64_t j, const std::vector<std::uint64_t>& positions) const {
  if (leaf_) return positions;  // the leaf's input is the root's
  return column_sources(seed_, root_, j, positions, constants_);
}

std::uint64_t RootSources::domain_share(int share, int shares) const {
  const std::uint64_t n = root_.records;
  if (share <= 0 || n == 0) return 0;
  if (share >= shares) return domain_size();
  const auto target = static_cast<std::uint64_t>(static_cast<unsigned __int128>(n) * static_cast<unsigned>(share) /
                                                 static_cast<unsigned>(shares));
  // The bucket whose records the target falls among, and the point of its
  // domain before which `target - first` of them are expected.
  std::uint64_t j = 0;
  while (j + 1 < buckets_ && core::bucket_first(n, buckets_, j + 1) <= target) ++j;
  const std::uint64_t first = leaf_ ? 0 : core::bucket_first(n, buckets_, j);
  const std::uint64_t records = leaf_ ? n : core::bucket_records(n, buckets_, j);
  const std::uint64_t domain = domain_first_[j + 1] - domain_first_[j];
  return domain_first_[j] + static_cast<std::uint64_t>(static_cast<unsigned __int128>(target - first) * domain /
                                                       records);
}

std::vector<std::uint64_t> RootSources::domain_inputs(std::uint64_t first, std::uint64_t end) const {
  std::vector<std::uint64_t> out;
  for (std::uint64_t j = 0; j < buckets_ && first < end; ++j) {
    const std::uint64_t lo = std::max(first, domain_first_[j]), hi = std::min(end, domain_first_[j + 1]);
    if (lo >= hi) continue;
    const core::VariablePhilox f = bijection(j);
    const std::uint64_t m = leaf_ ? root_.records : core::bucket_records(root_.records, buckets_, j);
    std::vector<std::uint64_t> positions;
    for (std::uint64_t i = lo - domain_first_[j]; i < hi - domain_first_[j]; ++i) {
      const std::uint64_t image = f(i);
      if (image < m) positions.push_back(image);
    }
    const std::vector<std::uint64_t> inputs = sources(j, positions);
    out.insert(out.end(), inputs.begin(), inputs.end());
  }
  return out;
}

std::vector<std::uint64_t> RootSources::range_inputs(std::uint64_t first, std::uint64_t end) const {
  const std::uint64_t n = root_.records;
  end = std::min(end, n);
  std::vector<std::uint64_t> out;
  for (std::uint64_t j = 0; j < buckets_ && first < end; ++j) {
    const std::uint64_t bucket_first = leaf_ ? 0 : core::bucket_first(n, buckets_, j);
    const std::uint64_t m = leaf_ ? n : core::bucket_records(n, buckets_, j);
    const std::uint64_t lo = std::max(first, bucket_first), hi = std::min(end, bucket_first + m);
    if (lo >= hi) continue;
    std::vector<std::uint64_t> wanted(hi - lo);
    std::iota(wanted.begin(), wanted.end(), lo - bucket_first);
    const std::vector<std::uint64_t> inputs = sources(j, shuffled_inputs(bijection(j), m, wanted));
    out.insert(out.end(), inputs.begin(), inputs.end());
  }
  return out;
}

}  // namespace extshuffle::ioperm
