// The chunks' side of the addressable permutation: positions in chunks'
// shuffles to records, and the compactions it keeps
// (extshuffle/modes/addressable_permutation.hpp).
#include "extshuffle/modes/addressable_permutation.hpp"

#include <map>

#include "addressable_levels.hpp"
#include "shuffle_compaction.hpp"

namespace extshuffle::modes {

using addressable::evaluate_in_place;
using addressable::in_slices;
using addressable::kParallelPositions;

namespace {

// A node's chunk bijections: kept in its level for nodes of at most
// kept_rows chunks, each made the first time prepare() meets it (before the
// threads start), else made where used.
class ChunkBijections {
 public:
  ChunkBijections(std::uint64_t seed, const core::Node& node, const core::PlanConstants& constants,
                  AddressableLevel& level, std::uint64_t kept_rows)
      : seed_(seed), node_(node), constants_(constants), level_(level),
        keep_(core::chunk_count(node.records, constants) <= kept_rows) {
    if (keep_ && level.shuffles.empty()) {
      level.shuffles.resize(core::chunk_count(node.records, constants));
      level.shuffle_built.assign(level.shuffles.size(), 0);
    }
  }

  void prepare(std::uint64_t i) {
    if (keep_ && !level_.shuffle_built[i]) {
      level_.shuffles[i] = make(i);
      level_.shuffle_built[i] = 1;
    }
  }

  // Chunk i's bijection (prepared), or one made in `scratch`.
  const core::VariablePhilox& get(std::uint64_t i, core::VariablePhilox& scratch) const {
    return keep_ ? level_.shuffles[i] : (scratch = make(i));
  }

 private:
  core::VariablePhilox make(std::uint64_t i) const {
    return core::shuffle_bijection(seed_, {node_.id, core::Purpose::kChunkShuffle, i},
                                   core::chunk_records(node_.records, i, constants_));
  }

  std::uint64_t seed_;
  core::Node node_;
  core::PlanConstants constants_;
  AddressableLevel& level_;
  bool keep_;
};

// order: the positions' indices grouped by chunk (a counting sort, stable);
// group g is chunk group_chunk[g], order[group_first[g], group_first[g + 1]).
void group_by_chunk(const std::vector<std::uint64_t>& chunk, std::uint64_t rows, std::vector<std::uint32_t>& first,
                    std::vector<std::uint32_t>& order, std::vector<std::uint64_t>& group_chunk,
                    std::vector<std::size_t>& group_first) {
  const std::size_t q = chunk.size();
  order.resize(q);
  first.assign(rows + 1, 0);
  for (std::size_t k = 0; k < q; ++k) ++first[chunk[k] + 1];
  for (std::uint64_t i = 0; i < rows; ++i) {
    if (first[i + 1] != 0) {
      group_chunk.push_back(i);
      group_first.push_back(first[i]);
    }
    first[i + 1] += first[i];
  }
  for (std::size_t k = 0; k < q; ++k) order[first[chunk[k]]++] = static_cast<std::uint32_t>(k);
  group_first.push_back(q);
}

}  // namespace

// values[k] (a place in chunk chunk[k]'s shuffle) replaced by the node's
// input index there: the positions grouped by chunk, each group through its
// chunk's bijection at once, vectorised.
void AddressablePermutation::chunk_records(AddressableLevel& level, const core::Node& node,
                                           std::span<std::uint64_t> values, const std::vector<std::uint64_t>& chunk,
                                           const AddressableCall& call) {
  const std::uint64_t rows = core::chunk_count(node.records, constants_);
  const std::size_t q = values.size();
  if (q <= rows) {  // a position a chunk or fewer: grouping would cost more than it saves
    scattered_chunk_records(level, node, values, chunk, call);
    return;
  }
  std::vector<std::uint64_t> group_chunk;
  std::vector<std::size_t> group_first;
  group_by_chunk(chunk, rows, level.first, level.order, group_chunk, group_first);
  const std::vector<std::uint32_t>& order = level.order;
  const std::size_t groups = group_chunk.size();
  // Bijections kept and compactions built before the threads start.
  ChunkBijections bijections(seed_, node, constants_, level, kKeptBijectionRows);
  std::vector<std::shared_ptr<const ShuffleCompaction>> orders(groups);
  for (std::size_t g = 0; g < groups; ++g) {
    const std::uint64_t i = group_chunk[g];
    core::VariablePhilox scratch;
    bijections.prepare(i);
    const core::VariablePhilox& f = bijections.get(i, scratch);
    const std::uint64_t m = core::chunk_records(node.records, i, constants_);
    if (f.domain_size() != m) orders[g] = compaction({node.id.depth, node.id.first, 2, i}, f, m);
  }
  // Tasks of whole groups, about q / (8 threads) positions each.
  const int workers = q < kParallelPositions ? 1 : call.threads;
  const std::size_t per_task = std::max<std::size_t>(1, q / (static_cast<std::size_t>(workers) * 8));
  std::vector<std::size_t> task_first{0};
  for (std::size_t g = 1; g < groups; ++g) {
    if (group_first[g] - group_first[task_first.back()] >= per_task) task_first.push_back(g);
  }
  task_first.push_back(groups);
  run_tasks(task_first.size() - 1, workers, [&](std::size_t t) {
    std::vector<std::uint64_t> buffer;
    for (std::size_t g = task_first[t]; g < task_first[t + 1]; ++g) {
      const std::uint64_t i = group_chunk[g];
      core::VariablePhilox scratch;
      const core::VariablePhilox& f = bijections.get(i, scratch);
      buffer.resize(group_first[g + 1] - group_first[g]);
      for (std::size_t k = 0; k < buffer.size(); ++k) buffer[k] = values[order[group_first[g] + k]];
      if (orders[g]) {
        orders[g]->records(f, buffer);
      } else {
        evaluate_in_place(f, buffer);
      }
      const std::uint64_t chunk_first = core::chunk_first(i, constants_);
      for (std::size_t k = 0; k < buffer.size(); ++k) values[order[group_first[g] + k]] = chunk_first + buffer[k];
    }
  });
}

// values[k] through chunk chunk[k]'s bijection one at a time, for
// positions spread over at least as many chunks.
void AddressablePermutation::scattered_chunk_records(AddressableLevel& level, const core::Node& node,
                                                     std::span<std::uint64_t> values,
                                                     const std::vector<std::uint64_t>& chunk,
                                                     const AddressableCall& call) {
  const std::uint64_t rows = core::chunk_count(node.records, constants_);
  ChunkBijections bijections(seed_, node, constants_, level, kKeptBijectionRows);
  // Full chunks have a domain of exactly L when L is a power of two of at
  // least 2^8 (the shipped L); then only the last chunk may be compacted.
  const bool full_chunks_exact =
      core::shuffle_bijection(seed_, {node.id, core::Purpose::kChunkShuffle, 0}, constants_.leaf_records)
          .domain_size() == constants_.leaf_records;
  auto may_be_compacted = [&](std::uint64_t i) { return !full_chunks_exact || i + 1 == rows; };
  std::map<std::uint64_t, std::shared_ptr<const ShuffleCompaction>> orders;  // built before the threads start
  for (std::size_t k = 0; k < values.size(); ++k) {
    const std::uint64_t i = chunk[k];
    bijections.prepare(i);
    if (may_be_compacted(i) && orders.find(i) == orders.end()) {
      core::VariablePhilox scratch;
      const core::VariablePhilox& f = bijections.get(i, scratch);
      const std::uint64_t m = core::chunk_records(node.records, i, constants_);
      orders[i] = f.domain_size() == m ? nullptr : compaction({node.id.depth, node.id.first, 2, i}, f, m);
    }
  }
  in_slices(values.size(), call.threads, [&](std::size_t begin, std::size_t end) {
    core::VariablePhilox scratch;
    for (std::size_t k = begin; k < end; ++k) {
      const std::uint64_t i = chunk[k];
      const core::VariablePhilox& f = bijections.get(i, scratch);
      const auto found = may_be_compacted(i) ? orders.find(i) : orders.end();
      if (found != orders.end() && found->second) {
        found->second->records(f, values.subspan(k, 1));
      } else {
        values[k] = f(values[k]);
      }
      values[k] += core::chunk_first(i, constants_);
    }
  });
}

// A compaction from the cache, built on a miss; the least recently used go
// once the cache holds more than kKeptCompactionBytes (those a call still
// holds live on until it lets go).
std::shared_ptr<const ShuffleCompaction> AddressablePermutation::compaction(const CompactionKey& key,
                                                                            const core::VariablePhilox& f,
                                                                            std::uint64_t m) {
  ++uses_;
  auto found = compactions_.find(key);
  if (found != compactions_.end()) {
    found->second.first = uses_;
    return found->second.second;
  }
  auto built = std::make_shared<const ShuffleCompaction>(f, m);
  compaction_bytes_ += built->memory_bytes();
  compactions_.emplace(key, std::make_pair(uses_, built));
  while (compaction_bytes_ > kKeptCompactionBytes && compactions_.size() > 1) {
    auto oldest = std::min_element(compactions_.begin(), compactions_.end(),
                                   [](const auto& x, const auto& y) { return x.second.first < y.second.first; });
    compaction_bytes_ -= oldest->second.second->memory_bytes();
    compactions_.erase(oldest);
  }
  return built;
}

}  // namespace extshuffle::modes
