// P(seed, N) addressed by output position and by record
// (extshuffle/modes/addressable_permutation.hpp).
#include "extshuffle/modes/addressable_permutation.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "addressable_levels.hpp"
#include "extshuffle/core/recursive_matrix.hpp"
#include "extshuffle/core/variable_philox_inverse.hpp"
#include "matrix_columns.hpp"
#include "shuffle_compaction.hpp"

namespace extshuffle::modes {

using addressable::evaluate_in_place;
using addressable::in_slices;

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

AddressablePermutation::~AddressablePermutation() = default;

void AddressablePermutation::positions(std::uint64_t first, std::uint64_t step, std::span<std::uint64_t> out,
                                       const EvaluationOptions& options) {
  if (out.empty()) return;
  if (step == 0) throw std::invalid_argument("addressable permutation: step 0");
  const std::uint64_t count = out.size();
  if (first >= n_ || (count - 1) > (n_ - 1 - first) / step) {
    throw std::out_of_range("addressable permutation: positions past " + std::to_string(n_) + " records");
  }
  for (std::uint64_t k = 0; k < count; ++k) out[k] = first + k * step;
  evaluate(out, options);
}

void AddressablePermutation::records_at(std::span<std::uint64_t> values, const EvaluationOptions& options) {
  for (std::size_t k = 0; k < values.size(); ++k) {
    if (values[k] >= n_ || (k > 0 && values[k] < values[k - 1])) {
      throw std::out_of_range("addressable permutation: positions must ascend and lie below " + std::to_string(n_));
    }
  }
  evaluate(values, options);
}

std::uint64_t AddressablePermutation::at(std::uint64_t position, const EvaluationOptions& options) {
  std::uint64_t value = 0;
  positions(position, 1, std::span<std::uint64_t>(&value, 1), options);
  return value;
}

// Ascending positions, a piece at a time, Ctrl-C asked between pieces.
void AddressablePermutation::evaluate(std::span<std::uint64_t> values, const EvaluationOptions& options) {
  const AddressableCall call{options.threads > 0 ? options.threads : usable_cores(), options.interrupt
                                                                                         ? InterruptPoint([&options] {
                                                                                             if (options.interrupt())
                                                                                               throw Interrupted();
                                                                                           })
                                                                                         : InterruptPoint()};
  std::lock_guard lock(mutex_);
  for (std::size_t first = 0; first < values.size(); first += kPiecePositions) {
    if (call.interrupt) call.interrupt();
    const std::size_t count = std::min<std::size_t>(kPiecePositions, values.size() - first);
    node_positions(core::Node{core::NodeId{0, 0}, n_}, values.subspan(first, count), call);
  }
}

// `values`: output positions of `node` in ascending order, replaced by the
// node's input indices of the records there.
void AddressablePermutation::node_positions(const core::Node& node, std::span<std::uint64_t> values,
                                            const AddressableCall& call) {
  const std::uint64_t n = node.records;
  if (core::is_leaf(n, constants_)) {
    leaf_records(node, values, call);
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
    node_positions(core::bucket_node(node, p, b), group, call);
    if (call.interrupt) call.interrupt();
    bucket_sources(node, p, b, group, call);
    i = j;
  }
}

void AddressablePermutation::leaf_records(const core::Node& node, std::span<std::uint64_t> values,
                                          const AddressableCall& call) {
  const core::VariablePhilox f =
      core::shuffle_bijection(seed_, {node.id, core::Purpose::kLeafShuffle, 0}, node.records);
  std::shared_ptr<const ShuffleCompaction> order;
  if (f.domain_size() != node.records) order = compaction({node.id.depth, node.id.first, 1, 0}, f, node.records);
  in_slices(values.size(), call.threads, [&](std::size_t begin, std::size_t end) {
    if (order) {
      order->records(f, values.subspan(begin, end - begin), true);  // a node's positions ascend
    } else {
      evaluate_in_place(f, values.subspan(begin, end - begin));
    }
  });
}

AddressableLevel& AddressablePermutation::level_for(const core::Node& node) {
  while (levels_.size() <= node.id.depth) levels_.push_back(std::make_unique<AddressableLevel>());
  AddressableLevel& level = *levels_[node.id.depth];
  if (!level.has_node || !same_node(level.node, node.id)) {
    AddressableLevel fresh;
    fresh.chunk = std::move(level.chunk);
    fresh.order = std::move(level.order);
    fresh.first = std::move(level.first);
    level = std::move(fresh);
    level.node = node.id;
    level.has_node = true;
  }
  return level;
}

// `values`: positions in bucket b's input, replaced by the node's input
// indices: each position's chunk and place in that chunk's shuffle, then
// the chunk's bijection there.
void AddressablePermutation::bucket_sources(const core::Node& node, std::uint64_t p, std::uint64_t b,
                                            std::span<std::uint64_t> values, const AddressableCall& call) {
  AddressableLevel& level = level_for(node);
  std::vector<std::uint64_t>& chunk = level.chunk;
  chunk.resize(values.size());
  if (column_for(level, node, p, b, values.size(), call)) {
    locate_by_column(level, values, chunk, call);
  } else {
    // A descent wants its positions sorted; the results go back in place.
    std::vector<std::pair<std::uint64_t, std::uint32_t>> sorted(values.size());
    for (std::size_t k = 0; k < values.size(); ++k) sorted[k] = {values[k], static_cast<std::uint32_t>(k)};
    std::sort(sorted.begin(), sorted.end());
    if (call.interrupt) call.interrupt();
    std::vector<std::uint64_t> queries(values.size()), chunks(values.size()), places(values.size());
    for (std::size_t k = 0; k < sorted.size(); ++k) queries[k] = sorted[k].first;
    locate_in_bucket(seed_, node, constants_, b, queries, chunks, places, call.interrupt);
    for (std::size_t k = 0; k < sorted.size(); ++k) {
      chunk[sorted[k].second] = chunks[k];
      values[sorted[k].second] = places[k];
    }
  }
  if (call.interrupt) call.interrupt();  // between the phases of a piece: tens of ms apart
  chunk_records(level, node, values, chunk, call);
}

// Makes level.before/start hold bucket b's column when that costs less than
// a descent to `queries` positions; false: descend instead.
bool AddressablePermutation::column_for(AddressableLevel& level, const core::Node& node, std::uint64_t p,
                                        std::uint64_t b, std::uint64_t queries, const AddressableCall& call) {
  if (level.column_bucket == b) return true;
  const std::uint64_t rows = core::chunk_count(node.records, constants_);
  if (rows * p <= kKeptMatrixEntries) {
    if (level.cumulative.empty()) {
      core::RecursiveMatrix matrix(seed_, node.id, node.records, constants_);
      std::vector<std::uint64_t> entries(rows * p);
      matrix.rows(0, rows, entries);
      level.cumulative.assign(rows * (p + 1), 0);
      for (std::uint64_t i = 0; i < rows; ++i) {
        std::uint64_t* sums = level.cumulative.data() + i * (p + 1);
        for (std::uint64_t j = 0; j < p; ++j) sums[j + 1] = sums[j] + entries[i * p + j];
      }
    }
    level.before.resize(rows);
    level.start.resize(rows + 1);
    level.start[0] = 0;
    for (std::uint64_t i = 0; i < rows; ++i) {
      const std::uint64_t* row = level.cumulative.data() + i * (p + 1);
      level.before[i] = row[b];
      level.start[i + 1] = level.start[i] + (row[b + 1] - row[b]);
    }
    level.column_bucket = b;
    return true;
  }
  const double descent = descent_ranges(rows, queries) * static_cast<double>(b + 1);
  if (rows > kMaxWalkRows) return false;
  const std::uint64_t held = level.walk ? level.walk->column() : MatrixColumnWalk::kNoColumn;
  const std::uint64_t columns = held != MatrixColumnWalk::kNoColumn && held <= b ? b - held : b + 1;
  if (static_cast<double>(columns) * static_cast<double>(rows - 1) > descent) return false;
  if (!level.walk) level.walk = std::make_unique<MatrixColumnWalk>(seed_, node, constants_);
  level.column_bucket = UINT64_MAX;  // until the walk completes
  level.walk->walk_to(b, call.threads, call.interrupt);
  level.before = level.walk->before();
  level.start.resize(rows + 1);
  level.start[0] = 0;
  const std::vector<std::uint64_t>& count = level.walk->count();
  for (std::uint64_t i = 0; i < rows; ++i) level.start[i + 1] = level.start[i] + count[i];
  level.column_bucket = b;
  return true;
}

// chunk[k] and values[k] (its place in that chunk's shuffle) from the
// column: chunk i's slice holds the bucket's positions [start[i], start[i+1]).
void AddressablePermutation::locate_by_column(const AddressableLevel& level, std::span<std::uint64_t> values,
                                              std::vector<std::uint64_t>& chunk, const AddressableCall& call) const {
  const std::vector<std::uint64_t>& start = level.start;
  const std::size_t rows = start.size() - 1;
  const double rows_per_position =
      static_cast<double>(rows) / static_cast<double>(std::max<std::uint64_t>(start[rows], 1));
  in_slices(values.size(), call.threads, [&](std::size_t begin, std::size_t end) {
    for (std::size_t k = begin; k < end; ++k) {
      const std::uint64_t v = values[k];
      // The slices are near-equal: guess by proportion, then step; a guess
      // far off (tiny test plans) falls back to a binary search.
      auto i = std::min(rows - 1, static_cast<std::size_t>(static_cast<double>(v) * rows_per_position));
      int steps = 0;
      while (i > 0 && start[i] > v && ++steps < 16) --i;
      while (i + 1 < rows && start[i + 1] <= v && ++steps < 16) ++i;
      if (start[i] > v || start[i + 1] <= v) {
        i = static_cast<std::size_t>(std::upper_bound(start.begin(), start.end(), v) - start.begin()) - 1;
      }
      chunk[k] = i;
      values[k] = level.before[i] + (v - start[i]);
    }
  });
}

std::uint64_t AddressablePermutation::position_of(std::uint64_t record) {
  if (record >= n_) {
    throw std::out_of_range("addressable permutation: record " + std::to_string(record) + " of " +
                            std::to_string(n_));
  }
  std::lock_guard lock(mutex_);
  // Where the shuffle of m records by f (addressed by `key`) puts input `input`.
  auto shuffled_position = [&](const CompactionKey& key, const core::VariablePhilox& f, std::uint64_t m,
                               std::uint64_t input) {
    const std::uint64_t preimage = core::variable_philox_inverse(f, input);
    return f.domain_size() == m ? preimage : compaction(key, f, m)->output_of(f, preimage);
  };
  core::Node node{core::NodeId{0, 0}, n_};
  std::uint64_t output_first = 0;  // the node's first output position in the whole order
  while (!core::is_leaf(node.records, constants_)) {
    const std::uint64_t i = record / constants_.leaf_records;
    const std::uint64_t m = core::chunk_records(node.records, i, constants_);
    const auto f = core::shuffle_bijection(seed_, {node.id, core::Purpose::kChunkShuffle, i}, m);
    const std::uint64_t shuffled =
        shuffled_position({node.id.depth, node.id.first, 2, i}, f, m, record - core::chunk_first(i, constants_));
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
  return output_first + shuffled_position({node.id.depth, node.id.first, 1, 0}, f, node.records, record);
}

}  // namespace extshuffle::modes
