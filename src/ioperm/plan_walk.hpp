// The IOPerm walk (Gustedt, section 6; docs/conventions.md, The walk): walks the canonical
// plan of core/plan.hpp and decides where each node runs (node_path.hpp),
// for every record layout (record_layout.hpp):
//   - a node whose records fit in the budget runs in RAM (the layout);
//   - a leaf larger than memory goes through windows (leaf_windows.hpp),
//     or, below a routed split, is routed into its windows by the split
//     itself (bucket_windows.hpp);
//   - any other node streams: 1. its chunks are read and located, 2.
//     shuffled, 3. cut by their rows of the communication matrix into the
//     buckets of the io layer's bucket store (chunks in memory), or its
//     records are routed one by one to their buckets' places (chunks larger
//     than memory); 4. each bucket runs in turn, consecutive small ones read
//     and run together.
// It prints nothing; statistics and progress go to the caller.
#pragma once

#include <cstdint>

#include "extshuffle/ioperm/bucket_targets.hpp"
#include "bucket_windows.hpp"
#include "leaf_orders.hpp"
#include "extshuffle/device/host_memory.hpp"
#include "extshuffle/io/bucket_store.hpp"
#include "node_path.hpp"
#include "record_layout.hpp"
#include "run_context.hpp"
#include "extshuffle/ioperm/stored_buckets.hpp"
#include "extshuffle/ioperm/walk_checkpoint.hpp"

namespace extshuffle::ioperm {

class PlanWalk {
 public:
  // `options.run.memory_bytes` is the arena, allocated here once; or `arena`
  // when given, the workspace of a root whose records are in memory already
  // (`root_mapped`, mapped while counted: run_context.hpp).
  PlanWalk(const RecordLayout& layout, io::BucketStore& store, const WalkOptions& options, const OutputSink& sink,
           device::HostMemory arena = {}, bool root_mapped = false);

  // Runs the plan of the root, whose bytes are `data`; returns what it did.
  WalkStats run(const NodeFacts& root, const io::ByteExtents& data);

  // The pieces of run() that a distributed run (src/mpi) puts together
  // itself: steps 1-3 of the split of `node` along `path` (kChunksInMemory
  // or kRouted, from choose_path, the same on every rank) for its chunks
  // [first_chunk, end_chunk), whose bytes `chunk_data` holds (starting with
  // chunk first_chunk), cut by their rows into `targets`. The chunk memory
  // is the first chunk_memory_bytes(p, path) of the arena, the rest is the
  // targets' to use. A routed split tags each record with its position in
  // its bucket (position_tag.hpp, the width of the largest bucket).
  // `points` (walk_checkpoint.hpp), when given, is called after each group
  // of chunks or batch of records; `first_record`: as scatter_routed()'s
  // (a resumed routed scatter may start inside chunk first_chunk).
  void scatter_chunks(const core::Node& node, const io::ByteExtents& chunk_data, const NodeFacts& facts, bool root,
                      NodePath path, std::uint64_t first_chunk, std::uint64_t end_chunk, BucketTargets& targets,
                      const ScatterPoint* points = nullptr, std::uint64_t first_record = UINT64_MAX);
  std::uint64_t chunk_memory_bytes(const NodeFacts& facts, NodePath path) const;
  // Step 4 for buckets [first, end) of `node` (whose facts are `facts`, its
  // p buckets filled by a split made elsewhere, routed or not), read from
  // `buckets`, their output to the sink in order: consecutive small ones
  // read with one request, the next group while one runs, as run() does.
  // Returns the passes through disk on the deepest path below them.
  // `points` (walk_checkpoint.hpp), when given, is called after each group
  // of buckets, and gives their space back (otherwise given back at once).
  std::uint32_t run_buckets(const core::Node& node, std::uint64_t p, std::uint64_t first, std::uint64_t end,
                            const NodeFacts& facts, bool routed, StoredBuckets& buckets,
                            const EmitPoint* points = nullptr);
  const WalkStats& stats() const { return stats_; }

 private:
  // Runs `node`; returns the passes through disk on its deepest path.
  std::uint32_t run_node(const core::Node& node, const io::ByteExtents& data, const NodeFacts& facts, bool root);
  std::uint32_t run_split(const core::Node& node, const io::ByteExtents& data, const NodeFacts& facts, bool root,
                          NodePath path);
  void scatter_in_memory(const core::Node& node, const io::ByteExtents& chunk_data, bool root,
                         std::uint64_t first_chunk, std::uint64_t end_chunk, BucketTargets& targets,
                         const ScatterPoint* points);
  // `first_record`: where the records start (a resumed scatter may start
  // inside chunk first_chunk), UINT64_MAX: at the chunk's first.
  void scatter_routed(const core::Node& node, const io::ByteExtents& chunk_data, const NodeFacts& facts, bool root,
                      std::uint64_t first_chunk, std::uint64_t end_chunk, BucketTargets& targets,
                      const BucketWindows& windows, LeafOrders* orders, const ScatterPoint* points,
                      std::uint64_t first_record = UINT64_MAX);

  const RecordLayout& layout_;
  io::BucketStore& store_;
  const WalkOptions& o_;
  WalkStats stats_;
  OutputLimiter output_;
  // One arena of exactly --memory bytes, pinned when the GPU shuffles, so
  // every buffer of the run is allocated (and first touched) once.
  device::HostMemory memory_;
  RunContext ctx_;
};

}  // namespace extshuffle::ioperm
