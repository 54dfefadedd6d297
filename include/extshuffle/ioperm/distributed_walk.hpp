// The walk's one door for a distributed run (Gustedt's ParPerm over IOPerm,
// docs/conventions.md, Several machines; src/mpi). Each rank scatters its share of the root's chunks
// (steps 1-3 of the root's split) into bucket targets of its own making, and
// runs its range of the buckets (step 4) from buckets it stored, with the
// record layout, the path decisions and the bytes one machine would use:
// so the output is byte-identical for every number of ranks.
//
// Everything here is what PlanWalk does inside one process, exposed per
// step; nothing in it knows of MPI.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "extshuffle/core/plan.hpp"
#include "extshuffle/io/bucket_store.hpp"
#include "extshuffle/io/byte_extents.hpp"
#include "extshuffle/ioperm/bucket_targets.hpp"
#include "extshuffle/ioperm/fixed_size_shuffle.hpp"
#include "extshuffle/ioperm/node_facts.hpp"
#include "extshuffle/ioperm/shuffle_options.hpp"
#include "extshuffle/ioperm/stored_buckets.hpp"
#include "extshuffle/ioperm/walk_checkpoint.hpp"

namespace extshuffle::ioperm {

class RecordLayout;

// The largest write buffer the walk gives one bucket, in bytes (two per
// bucket): a distributed run sizes its per-bucket writers the same way.
std::uint64_t max_bucket_buffer_bytes();

class DistributedWalk {
 public:
  // A walk of framed records (`framed`: of options.syntax, every framing,
  // --skip-empty by options.skip_blank) or of fixed-size records of
  // options.walk.record_size bytes, whose arena is
  // options.walk.run.memory_bytes. Keeps a copy of the options.
  DistributedWalk(const TextOptions& options, bool framed);
  ~DistributedWalk();
  DistributedWalk(const DistributedWalk&) = delete;
  DistributedWalk& operator=(const DistributedWalk&) = delete;

  const TextOptions& options() const { return options_; }

  // Throws BudgetError when the budget cannot run a plan with this root
  // (every path of every node checked, as one machine checks before work).
  void check_budget(const NodeFacts& root) const;

  // The memory the scatter of the root's split into `p` buckets along
  // `path` (kChunksInMemory or kRouted) takes of an arena of `arena_bytes`:
  // the chunk memory, and the most bytes one group of chunks (or one routed
  // batch, tags included) hands to the targets between two group_done()
  // calls. Nullopt when the path does not fit the arena.
  struct ScatterMemory {
    std::uint64_t chunk_memory_bytes = 0;
    std::uint64_t round_bytes = 0;
  };
  std::optional<ScatterMemory> scatter_memory(const NodeFacts& root, std::uint64_t p, NodePath path,
                                              std::uint64_t arena_bytes) const;

  // Bytes of the position tag a routed split of a node whose first bucket
  // holds `first_bucket_records` records puts before each record.
  std::uint32_t tag_width(std::uint64_t first_bucket_records) const;

  // Scratch bytes a bucket of `bucket_records` records of a node (n records,
  // `record_bytes` bytes, tags not counted) gets, tags of `tag_width` bytes
  // included; exact for fixed-size records, whose buckets never overflow.
  std::uint64_t bucket_region_bytes(std::uint64_t record_bytes, std::uint64_t n, std::uint64_t bucket_records,
                                    std::uint32_t tag_width) const;
  bool buckets_may_overflow() const;

  // Steps 1-3 of the root's split along `path` for chunks [first_chunk,
  // end_chunk), whose bytes `chunk_data` holds (from chunk first_chunk on,
  // or from record `first_record` on: a routed scatter resumed inside a
  // chunk), each chunk's slices to `targets` (group_done() after each
  // group), then `points` (walk_checkpoint.hpp) when given. `stats`
  // receives what was read and written, also when it throws.
  void scatter_chunks(io::BucketStore& store, const core::Node& root, const io::ByteExtents& chunk_data,
                      const NodeFacts& facts, NodePath path, std::uint64_t first_chunk, std::uint64_t end_chunk,
                      BucketTargets& targets, WalkStats& stats, const ScatterPoint* points = nullptr,
                      std::uint64_t first_record = UINT64_MAX) const;

  // Step 4 for buckets [first, end) of the root's split into p buckets
  // (routed or not), read from `buckets`, their output to `sink` in order.
  // Returns the passes through disk on the deepest path below them; `stats`
  // as above. `points` (walk_checkpoint.hpp), when given, is called after
  // each group of buckets is output, and must run the release it is given.
  std::uint32_t run_buckets(io::BucketStore& store, const OutputSink& sink, const core::Node& root, std::uint64_t p,
                            std::uint64_t first, std::uint64_t end, const NodeFacts& facts, bool routed,
                            StoredBuckets& buckets, WalkStats& stats, const EmitPoint* points = nullptr) const;

 private:
  TextOptions options_;
  std::unique_ptr<RecordLayout> layout_;
};

}  // namespace extshuffle::ioperm
