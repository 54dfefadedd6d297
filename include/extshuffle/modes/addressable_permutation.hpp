// P(seed, N) as an addressable index: the record at any output position and
// the output position of any record, without the other N - 1. It gives the
// same order as `extshuffle -i 0-(N-1) --seed seed`, and so the order of
// every dataset of N records the tool writes with that seed; data loaders
// use it to read an epoch's order a block at a time (docs/python.md).
//
// Forward, output positions are traced back through the plan: a position
// lies in one bucket of a split node; the bucket's input is one slice of
// every chunk's shuffle (the communication matrix's column says which), so
// each position is traced down to its leaf and back up through the chunk
// shuffles (as modes/permutation_prefix does for a prefix). Backward, a
// record's chunk shuffle is inverted (the VariablePhilox inverse, plus the
// count of the domain points before it that give records when the chunk's
// domain is wider than the chunk), its matrix row says which bucket it goes
// to and where in it, and the bucket is followed down to its leaf.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <tuple>
#include <vector>

#include "extshuffle/core/plan.hpp"
#include "extshuffle/core/variable_philox.hpp"

namespace extshuffle::modes {

class AddressablePermutation {
 public:
  // Throws std::invalid_argument if check_plan() rejects n or the constants,
  // or leaf_records exceeds 2^32 (a leaf's order is held as 32-bit indices,
  // as the walk holds it).
  AddressablePermutation(std::uint64_t seed, std::uint64_t n, const core::PlanConstants& constants = core::kPlanV2);

  std::uint64_t size() const { return n_; }
  std::uint64_t seed() const { return seed_; }
  const core::PlanConstants& constants() const { return constants_; }

  // out[k] = the record at output position first + k * step (step >= 1),
  // for k < out.size(); every position must be < size() (std::out_of_range
  // otherwise). Thread-safe (one call at a time per object).
  //
  // Cost: per split node on the way, a setup the first time one of its
  // buckets is reached (its communication matrix, drawn once and kept when
  // it has at most kKeptMatrixEntries entries, else bucket b's column,
  // drawn row block by row block: 2^20 entries a node at N <= 2^30), then
  // per position one bijection evaluation a level and a binary search over
  // the node's chunks. A leaf or chunk whose domain is wider than its
  // records is compacted once (its records' order, a word a record, at most
  // L). Memory: kept matrices and columns (at most 8 MiB a level at
  // N <= 2^30), at most kKeptCompactions compactions (4 MiB each at L =
  // 2^20), and O(out.size()) words.
  void positions(std::uint64_t first, std::uint64_t step, std::span<std::uint64_t> out);
  std::uint64_t at(std::uint64_t position);

  // The output position of `record` (< size(), std::out_of_range
  // otherwise): at(position_of(r)) == r. Cost per level: one matrix row
  // and the column sums before it (O(log chunks) splits), one inversion,
  // and, where a chunk's domain is wider than its records, a count over
  // the domain points before it (at most 2 L evaluations).
  std::uint64_t position_of(std::uint64_t record);

  static constexpr std::uint64_t kKeptMatrixEntries = std::uint64_t{1} << 21;
  static constexpr std::size_t kKeptCompactions = 4;
  static constexpr std::uint64_t kKeptBijections = std::uint64_t{1} << 16;  // 9 MiB of round keys

 private:
  // The matrix of one split node (kept when small) and one of its columns.
  struct LevelCache {
    core::NodeId matrix_node{};
    bool has_matrix = false;
    std::vector<std::uint64_t> cumulative;  // rows x (p + 1): records of chunk i before bucket j
    core::NodeId column_node{};
    std::uint64_t column_bucket = UINT64_MAX;
    std::vector<std::uint64_t> before;  // chunk i's shuffled records before this bucket's slice
    std::vector<std::uint64_t> start;   // where chunk i's slice begins in the bucket's input; rows + 1
    core::NodeId shuffles_node{};
    bool has_shuffles = false;
    std::vector<core::VariablePhilox> shuffles;  // the node's chunk bijections, kept for few chunks
  };
  using CompactionKey = std::tuple<std::uint32_t, std::uint64_t, std::uint32_t, std::uint64_t>;

  void node_positions(const core::Node& node, std::span<std::uint64_t> values);
  void bucket_sources(const core::Node& node, std::uint64_t p, std::uint64_t b, std::span<std::uint64_t> values);
  const core::VariablePhilox& chunk_shuffle(const core::Node& node, std::uint64_t i, core::VariablePhilox& scratch);
  const LevelCache& column(const core::Node& node, std::uint64_t p, std::uint64_t b);
  void keep_matrix(LevelCache& level, const core::Node& node, std::uint64_t p);
  // The records a shuffle of m records on a wider domain gives, in output order.
  const std::vector<std::uint32_t>& compaction(const CompactionKey& key, const core::VariablePhilox& f,
                                               std::uint64_t m);
  std::uint64_t shuffled_position(const core::VariablePhilox& f, std::uint64_t m, std::uint64_t input) const;

  std::uint64_t seed_;
  std::uint64_t n_;
  core::PlanConstants constants_;
  std::mutex mutex_;
  std::vector<LevelCache> levels_;
  std::map<CompactionKey, std::pair<std::uint64_t, std::vector<std::uint32_t>>> compactions_;  // key -> (use, order)
  std::uint64_t uses_ = 0;
};

// The bucket of a split node of n records and p buckets that holds the
// node's output position `position`: the inverse of core::bucket_first.
std::uint64_t bucket_of_position(std::uint64_t n, std::uint64_t p, std::uint64_t position);

}  // namespace extshuffle::modes

namespace extshuffle::modes {

// The seed of epoch `epoch` of a run seeded `seed`, for data loaders that
// reshuffle every epoch: SplitMix64's output function applied twice,
// mix(mix(seed) ^ epoch) with mix(x) = SplitMix64's finaliser of
// x + 0x9E3779B97F4A7C15. Each mix is a bijection of the 64-bit words, so
// distinct epochs of one seed (and one epoch of distinct seeds) never share
// a seed, and every bit of both inputs reaches every bit of the result.
// docs/python.md states the formula; changing it changes every loader's order.
constexpr std::uint64_t splitmix64_mix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}
constexpr std::uint64_t epoch_seed(std::uint64_t seed, std::uint64_t epoch) {
  return splitmix64_mix(splitmix64_mix(seed) ^ epoch);
}

}  // namespace extshuffle::modes
