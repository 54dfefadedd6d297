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
// shuffles (as modes/permutation_prefix does for a prefix). The column comes
// from a kept matrix (small nodes), a walk column by column (sequential
// reading), or a descent to the positions alone (few positions):
// src/modes/matrix_columns.hpp says what each costs. Backward, a record's
// chunk shuffle is inverted, its matrix row says which bucket it goes to and
// where in it, and the bucket is followed down to its leaf.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <stdexcept>
#include <tuple>
#include <vector>

#include "extshuffle/core/plan.hpp"
#include "extshuffle/core/variable_philox.hpp"

namespace extshuffle::modes {

class ShuffleCompaction;
struct AddressableLevel;  // src/modes/addressable_levels.hpp
struct AddressableCall;

// Asked on the calling thread between pieces of a long call (at most about
// 2^20 positions, 2^16 draws or 2^20 evaluations apart with the shipped
// constants: tens of milliseconds); returning true abandons the call, which
// then throws Interrupted. The Python package asks Python's signal handlers
// here, so that Ctrl-C raises KeyboardInterrupt.
using InterruptCheck = std::function<bool()>;

class Interrupted : public std::runtime_error {
 public:
  Interrupted() : std::runtime_error("addressable permutation: interrupted") {}
};

struct EvaluationOptions {
  int threads = 0;           // 0: every core this process may run on
  InterruptCheck interrupt;  // empty: never interrupted
};

class AddressablePermutation {
 public:
  // Throws std::invalid_argument if check_plan() rejects n or the constants,
  // or leaf_records exceeds 2^32 (a leaf's order is held as 32-bit indices,
  // as the walk holds it).
  AddressablePermutation(std::uint64_t seed, std::uint64_t n, const core::PlanConstants& constants = core::kPlanV2);
  ~AddressablePermutation();

  std::uint64_t size() const { return n_; }
  std::uint64_t seed() const { return seed_; }
  const core::PlanConstants& constants() const { return constants_; }

  // out[k] = the record at output position first + k * step (step >= 1),
  // for k < out.size(); every position must be < size() (std::out_of_range
  // otherwise). Thread-safe (one call at a time per object; threads are
  // started for the call and joined before it returns).
  //
  // Cost, per plan level on the way: per position, one evaluation of a
  // bijection (vectorised, positions grouped by chunk) and a search of a
  // node's chunks; per bucket reached, its column of the node's matrix:
  // R - 1 draws for a node of R chunks read in order (each column after the
  // last), (b + 1)(R - 1) to start at bucket b, or, for few positions, a
  // descent of (b + 1) draws per range visited, whichever costs less. Per
  // leaf or chunk with a domain wider than its records, its compaction once
  // (shuffle_compaction.hpp). Memory: a walked node's ~100 bytes a chunk
  // (walks stop at kMaxWalkRows chunks), a node's bijections (~130 bytes a
  // chunk, for at most kKeptBijectionRows chunks), compactions up to
  // kKeptCompactionBytes, and scratch of ~24 bytes a position of a piece.
  void positions(std::uint64_t first, std::uint64_t step, std::span<std::uint64_t> out,
                 const EvaluationOptions& options = {});
  // values: output positions in ascending order (repeats allowed), each
  // replaced by the record there. Cost as positions().
  void records_at(std::span<std::uint64_t> values, const EvaluationOptions& options = {});
  std::uint64_t at(std::uint64_t position, const EvaluationOptions& options = {});

  // The output position of `record` (< size(), std::out_of_range
  // otherwise): at(position_of(r)) == r. Cost per level: one matrix row
  // and the column sums before it (O(log chunks) splits of p draws), one
  // inversion, and, where a chunk's domain is wider than its records, its
  // compaction.
  std::uint64_t position_of(std::uint64_t record);

  static constexpr std::uint64_t kPiecePositions = std::uint64_t{1} << 20;
  static constexpr std::uint64_t kKeptMatrixEntries = std::uint64_t{1} << 16;
  static constexpr std::uint64_t kMaxWalkRows = std::uint64_t{1} << 18;
  static constexpr std::uint64_t kKeptBijectionRows = std::uint64_t{1} << 16;
  static constexpr std::size_t kKeptCompactionBytes = std::size_t{64} << 20;

 private:
  using CompactionKey = std::tuple<std::uint32_t, std::uint64_t, std::uint32_t, std::uint64_t>;

  void evaluate(std::span<std::uint64_t> values, const EvaluationOptions& options);
  void node_positions(const core::Node& node, std::span<std::uint64_t> values, const AddressableCall& call);
  void leaf_records(const core::Node& node, std::span<std::uint64_t> values, const AddressableCall& call);
  void bucket_sources(const core::Node& node, std::uint64_t p, std::uint64_t b, std::span<std::uint64_t> values,
                      const AddressableCall& call);
  bool column_for(AddressableLevel& level, const core::Node& node, std::uint64_t p, std::uint64_t b,
                  std::uint64_t queries, const AddressableCall& call);
  void locate_by_column(const AddressableLevel& level, std::span<std::uint64_t> values,
                        std::vector<std::uint64_t>& chunk, const AddressableCall& call) const;
  void chunk_records(AddressableLevel& level, const core::Node& node, std::span<std::uint64_t> values,
                     const std::vector<std::uint64_t>& chunk, const AddressableCall& call);
  void scattered_chunk_records(AddressableLevel& level, const core::Node& node, std::span<std::uint64_t> values,
                               const std::vector<std::uint64_t>& chunk, const AddressableCall& call);
  AddressableLevel& level_for(const core::Node& node);
  std::shared_ptr<const ShuffleCompaction> compaction(const CompactionKey& key, const core::VariablePhilox& f,
                                                      std::uint64_t m);

  std::uint64_t seed_;
  std::uint64_t n_;
  core::PlanConstants constants_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<AddressableLevel>> levels_;
  std::map<CompactionKey, std::pair<std::uint64_t, std::shared_ptr<const ShuffleCompaction>>> compactions_;
  std::size_t compaction_bytes_ = 0;
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
