// P(seed, N) addressed by output position and by record
// (extshuffle/modes/addressable_permutation.hpp).
#include "extshuffle/modes/addressable_permutation.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "extshuffle/core/recursive_matrix.hpp"
#include "extshuffle/core/variable_philox_inverse.hpp"
#include "extshuffle/device/permutation_indices.hpp"

namespace extshuffle::modes {
namespace {

bool same_node(const core::NodeId& a, const core::NodeId& b) { return a.depth == b.depth && a.first == b.first; }

}  // namespace

std::uint64_t bucket_of_position(std::uint64_t n, std::uint64_t p, std::uint64_t position) {
  const std::uint64_t small = n / p, extra = n % p;
  const std::uint64_t in_large = extra * (small + 1);  // the first `extra` buckets hold one more
  if (position < in_large) return position / (small + 1);
  return extra + (position - in_large) / small;
}

AddressablePermutation::AddressablePermutation(std::uint64_t seed, std::uint64_t n,
                                               const core::PlanConstants& constants)
    : seed_(seed), n_(n), constants_(constants) {
  core::check_plan(n, constants);
  if (constants.leaf_records > UINT32_MAX) {
    throw std::invalid_argument("addressable permutation: leaf_records above 2^32");
  }
}

void AddressablePermutation::positions(std::uint64_t first, std::uint64_t step, std::span<std::uint64_t> out) {
  if (out.empty()) return;
  if (step == 0) throw std::invalid_argument("addressable permutation: step 0");
  const std::uint64_t count = out.size();
  if (first >= n_ || (count - 1) > (n_ - 1 - first) / step) {
    throw std::out_of_range("addressable permutation: positions past " + std::to_string(n_) + " records");
  }
  for (std::uint64_t k = 0; k < count; ++k) out[k] = first + k * step;
  std::lock_guard lock(mutex_);
  node_positions(core::Node{core::NodeId{0, 0}, n_}, out);
}

std::uint64_t AddressablePermutation::at(std::uint64_t position) {
  std::uint64_t value = 0;
  positions(position, 1, std::span<std::uint64_t>(&value, 1));
  return value;
}

// `values`: output positions of `node` in ascending order, replaced by the
// node's input indices of the records there.
void AddressablePermutation::node_positions(const core::Node& node, std::span<std::uint64_t> values) {
  const std::uint64_t n = node.records;
  if (core::is_leaf(n, constants_)) {
    const core::VariablePhilox f = core::shuffle_bijection(seed_, {node.id, core::Purpose::kLeafShuffle, 0}, n);
    if (f.domain_size() == n) {
      for (std::uint64_t& v : values) v = f(v);
      return;
    }
    const auto& order = compaction({node.id.depth, node.id.first, 1, 0}, f, n);
    for (std::uint64_t& v : values) v = order[v];
    return;
  }
  const std::uint64_t p = core::bucket_count(n, constants_);
  for (std::size_t i = 0; i < values.size();) {
    const std::uint64_t b = bucket_of_position(n, p, values[i]);
    const std::uint64_t bucket_first = core::bucket_first(n, p, b);
    const std::uint64_t bucket_end = bucket_first + core::bucket_records(n, p, b);
    std::size_t j = i;
    for (; j < values.size() && values[j] < bucket_end; ++j) values[j] -= bucket_first;
    const std::span<std::uint64_t> group = values.subspan(i, j - i);
    node_positions(core::bucket_node(node, p, b), group);
    bucket_sources(node, p, b, group);
    i = j;
  }
}

// `values`: positions in bucket b's input, replaced by the node's input
// indices: chunk i's slice of the bucket is its shuffled records
// [before[i], before[i] + count) and lies at start[i] in the bucket.
void AddressablePermutation::bucket_sources(const core::Node& node, std::uint64_t p, std::uint64_t b,
                                            std::span<std::uint64_t> values) {
  const LevelCache& level = column(node, p, b);
  core::VariablePhilox scratch;
  for (std::uint64_t& v : values) {
    const std::uint64_t i =
        static_cast<std::uint64_t>(std::upper_bound(level.start.begin(), level.start.end(), v) - level.start.begin()) - 1;
    const std::uint64_t shuffled = level.before[i] + (v - level.start[i]);
    const std::uint64_t m = core::chunk_records(node.records, i, constants_);
    const core::VariablePhilox& f = chunk_shuffle(node, i, scratch);
    const std::uint64_t input = f.domain_size() == m
                                    ? f(shuffled)
                                    : compaction({node.id.depth, node.id.first, 2, i}, f, m)[shuffled];
    v = core::chunk_first(i, constants_) + input;
  }
}

const core::VariablePhilox& AddressablePermutation::chunk_shuffle(const core::Node& node, std::uint64_t i,
                                                                  core::VariablePhilox& scratch) {
  const std::uint64_t rows = core::chunk_count(node.records, constants_);
  auto bijection = [&](std::uint64_t chunk) {
    return core::shuffle_bijection(seed_, {node.id, core::Purpose::kChunkShuffle, chunk},
                                   core::chunk_records(node.records, chunk, constants_));
  };
  if (rows > kKeptBijections) {
    scratch = bijection(i);
    return scratch;
  }
  LevelCache& level = levels_[node.id.depth];
  if (!level.has_shuffles || !same_node(level.shuffles_node, node.id)) {
    level.shuffles.resize(rows);
    for (std::uint64_t chunk = 0; chunk < rows; ++chunk) level.shuffles[chunk] = bijection(chunk);
    level.shuffles_node = node.id;
    level.has_shuffles = true;
  }
  return level.shuffles[i];
}

const AddressablePermutation::LevelCache& AddressablePermutation::column(const core::Node& node, std::uint64_t p,
                                                                         std::uint64_t b) {
  if (levels_.size() <= node.id.depth) levels_.resize(node.id.depth + 1);
  LevelCache& level = levels_[node.id.depth];
  if (level.column_bucket == b && same_node(level.column_node, node.id)) return level;
  const std::uint64_t rows = core::chunk_count(node.records, constants_);
  level.before.resize(rows);
  level.start.resize(rows + 1);
  level.start[0] = 0;
  if (rows * p <= kKeptMatrixEntries) {
    if (!level.has_matrix || !same_node(level.matrix_node, node.id)) keep_matrix(level, node, p);
    for (std::uint64_t i = 0; i < rows; ++i) {
      const std::uint64_t* row = level.cumulative.data() + i * (p + 1);
      level.before[i] = row[b];
      level.start[i + 1] = level.start[i] + (row[b + 1] - row[b]);
    }
  } else {
    // Too large to keep: the rows drawn a block at a time, column b kept.
    core::RecursiveMatrix matrix(seed_, node.id, node.records, constants_);
    const std::uint64_t block = std::max<std::uint64_t>(1, (std::uint64_t{1} << 16) / p);
    std::vector<std::uint64_t> entries;
    for (std::uint64_t lo = 0; lo < rows; lo += block) {
      const std::uint64_t hi = std::min(rows, lo + block);
      entries.resize((hi - lo) * p);
      matrix.rows(lo, hi, entries);
      for (std::uint64_t i = lo; i < hi; ++i) {
        const std::uint64_t* row = entries.data() + (i - lo) * p;
        std::uint64_t before = 0;
        for (std::uint64_t j = 0; j < b; ++j) before += row[j];
        level.before[i] = before;
        level.start[i + 1] = level.start[i] + row[b];
      }
    }
  }
  level.column_node = node.id;
  level.column_bucket = b;
  return level;
}

void AddressablePermutation::keep_matrix(LevelCache& level, const core::Node& node, std::uint64_t p) {
  core::RecursiveMatrix matrix(seed_, node.id, node.records, constants_);
  const std::uint64_t rows = matrix.row_count();
  std::vector<std::uint64_t> entries(rows * p);
  matrix.rows(0, rows, entries);
  level.cumulative.assign(rows * (p + 1), 0);
  for (std::uint64_t i = 0; i < rows; ++i) {
    std::uint64_t* sums = level.cumulative.data() + i * (p + 1);
    for (std::uint64_t j = 0; j < p; ++j) sums[j + 1] = sums[j] + entries[i * p + j];
  }
  level.matrix_node = node.id;
  level.has_matrix = true;
}

const std::vector<std::uint32_t>& AddressablePermutation::compaction(const CompactionKey& key,
                                                                     const core::VariablePhilox& f, std::uint64_t m) {
  ++uses_;
  auto found = compactions_.find(key);
  if (found != compactions_.end()) {
    found->second.first = uses_;
    return found->second.second;
  }
  if (compactions_.size() >= kKeptCompactions) {  // the least recently used goes
    auto oldest = std::min_element(compactions_.begin(), compactions_.end(),
                                   [](const auto& x, const auto& y) { return x.second.first < y.second.first; });
    compactions_.erase(oldest);
  }
  // The vectorised evaluation the walk uses (device/permutation_indices.hpp), on this thread.
  std::vector<std::uint32_t> order(m);
  device::shuffle_permutation(f, m, order.data(), 1);
  return compactions_.emplace(key, std::make_pair(uses_, std::move(order))).first->second.second;
}

// Where the bijective shuffle of m records puts record `input`: its
// preimage's rank among the domain points that give records.
std::uint64_t AddressablePermutation::shuffled_position(const core::VariablePhilox& f, std::uint64_t m,
                                                        std::uint64_t input) const {
  const std::uint64_t preimage = core::variable_philox_inverse(f, input);
  if (f.domain_size() == m) return preimage;
  std::uint64_t rank = 0;
  for (std::uint64_t i = 0; i < preimage; ++i) rank += f(i) < m ? 1 : 0;
  return rank;
}

std::uint64_t AddressablePermutation::position_of(std::uint64_t record) {
  if (record >= n_) {
    throw std::out_of_range("addressable permutation: record " + std::to_string(record) + " of " +
                            std::to_string(n_));
  }
  core::Node node{core::NodeId{0, 0}, n_};
  std::uint64_t output_first = 0;  // the node's first output position in the whole order
  while (!core::is_leaf(node.records, constants_)) {
    const std::uint64_t i = record / constants_.leaf_records;
    const std::uint64_t m = core::chunk_records(node.records, i, constants_);
    const auto f = core::shuffle_bijection(seed_, {node.id, core::Purpose::kChunkShuffle, i}, m);
    const std::uint64_t shuffled = shuffled_position(f, m, record - core::chunk_first(i, constants_));
    core::RecursiveMatrix matrix(seed_, node.id, node.records, constants_);
    const std::uint64_t p = matrix.bucket_count();
    std::vector<std::uint64_t> row(p), column_before(p);
    matrix.rows(i, i + 1, row);
    matrix.column_sums_before(i, column_before);
    std::uint64_t b = 0, before = 0;
    while (shuffled >= before + row[b]) before += row[b++];
    record = column_before[b] + (shuffled - before);  // its position in bucket b's input
    output_first += core::bucket_first(node.records, p, b);
    node = core::bucket_node(node, p, b);
  }
  const auto f = core::shuffle_bijection(seed_, {node.id, core::Purpose::kLeafShuffle, 0}, node.records);
  return output_first + shuffled_position(f, node.records, record);
}

}  // namespace extshuffle::modes
