// The IOPerm driver (Gustedt, section 6; DESIGN.md 2.3): walks the canonical
// plan of core/plan.hpp and decides where each node runs, for every record
// layout (record_layout.hpp):
//   - a node whose records fit in the budget runs in RAM (the layout);
//   - a leaf larger than memory is gathered in windows (the layout);
//   - any other node streams: 1. its chunks are read ahead and located,
//     2. shuffled, 3. cut by their rows of the communication matrix into
//     the buckets of the io layer's bucket store, 4. each bucket runs in
//     turn, consecutive small ones read and run together.
// It prints nothing; statistics and progress go to the caller.
#pragma once

#include <cstdint>

#include "extshuffle/device/host_memory.hpp"
#include "extshuffle/io/bucket_store.hpp"
#include "bucket_targets.hpp"
#include "record_layout.hpp"
#include "run_context.hpp"

namespace extshuffle::driver {

class PlanWalk {
 public:
  // `options.memory_bytes` is the arena, allocated here once.
  PlanWalk(const RecordLayout& layout, io::BucketStore& store, const ExternalOptions& options, const OutputSink& sink);

  // Runs the plan of `records` records whose bytes are `data`; returns what it did.
  ExternalStats run(std::uint64_t records, const io::ByteExtents& data);

  // The pieces of run() that a distributed run (src/mpi) puts together
  // itself: steps 1-3 of the split of `node` for its chunks [first_chunk,
  // end_chunk), whose bytes `chunk_data` holds (starting with chunk
  // first_chunk), cut by their rows into `targets`; `root` as for run_node.
  // The chunk memory is the first split_layout(p).chunk_memory_bytes of the
  // arena, the rest is the targets' to use.
  void scatter_chunks(const core::Node& node, const io::ByteExtents& chunk_data, bool root, std::uint64_t first_chunk,
                      std::uint64_t end_chunk, BucketTargets& targets);
  // Runs `node` (a bucket of a split made elsewhere, or the root) from its
  // bytes, its output to the sink in order; returns the passes through disk
  // on its deepest path.
  std::uint32_t run_subtree(const core::Node& node, const io::ByteExtents& data) {
    return run_node(node, data, node.id.depth == 0);
  }
  const ExternalStats& stats() const { return stats_; }

 private:
  // Runs `node`; returns the passes through disk on its deepest path.
  std::uint32_t run_node(const core::Node& node, const io::ByteExtents& data, bool root);
  std::uint32_t run_split(const core::Node& node, const io::ByteExtents& data, bool root);
  std::uint32_t run_buckets(const core::Node& node, std::uint64_t p, io::BucketStore::Split& split);
  // Hands a window of a leaf's output to the output, cut at -n.
  void emit_window(const Window& window);

  const RecordLayout& layout_;
  io::BucketStore& store_;
  const ExternalOptions& o_;
  ExternalStats stats_;
  OutputLimiter output_;
  // One arena of exactly --memory bytes, pinned when the GPU shuffles, so
  // every buffer of the run is allocated (and first touched) once.
  device::HostMemory memory_;
  RunContext ctx_;
};

// Where the driver would run each node, computed without IO from the plan
// and the layout's budget rules, taking every record to be of the average
// size. `passes` counts passes through disk on the deepest path.
Schedule plan_schedule(const RecordLayout& layout, const core::PlanConstants& constants, std::uint64_t records,
                       std::uint64_t bytes, std::uint64_t budget);

}  // namespace extshuffle::driver
