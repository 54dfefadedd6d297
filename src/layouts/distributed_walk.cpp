// DistributedWalk (extshuffle/ioperm/distributed_walk.hpp): PlanWalk's steps
// over a record layout of its own, for src/mpi.
#include "extshuffle/ioperm/distributed_walk.hpp"

#include "extshuffle/errors.hpp"
#include "fixed_records.hpp"
#include "ioperm/node_path.hpp"
#include "ioperm/plan_walk.hpp"
#include "ioperm/position_tag.hpp"
#include "ioperm/tuning.hpp"
#include "text_records.hpp"

namespace extshuffle::ioperm {

std::uint64_t max_bucket_buffer_bytes() { return tuning::kMaxBucketBuffer; }

// The layout keeps a reference to the options it is made with: they are
// this object's own copy.
DistributedWalk::DistributedWalk(const TextOptions& options, bool framed) : options_(options) {
  if (framed) {
    layout_ = std::make_unique<TextRecords>(options_);
  } else {
    layout_ = std::make_unique<FixedRecords>(options_.walk);
  }
}

DistributedWalk::~DistributedWalk() = default;

void DistributedWalk::check_budget(const NodeFacts& root) const {
  layout_->check_budget(root, options_.walk.run.memory_bytes);
}

std::optional<DistributedWalk::ScatterMemory> DistributedWalk::scatter_memory(const NodeFacts& root, std::uint64_t p,
                                                                              NodePath path,
                                                                              std::uint64_t arena_bytes) const {
  try {
    if (path == NodePath::kRouted) {
      const RoutedSplitMemory m =
          routed_split_memory(*layout_, p, routed_open_chunks(root), root.max_record_bytes, arena_bytes);
      const std::uint32_t width = tag_width(core::bucket_records(root.records, p, 0));
      return ScatterMemory{m.chunk_memory_bytes, m.space_bytes + m.max_batch * width};
    }
    if (!layout_->chunks_fit(root, arena_bytes)) return std::nullopt;
    const std::uint64_t chunk_memory = layout_->split_layout(p, arena_bytes).chunk_memory_bytes;
    return ScatterMemory{chunk_memory, chunk_memory};
  } catch (const BudgetError&) {
    return std::nullopt;
  }
}

std::uint32_t DistributedWalk::tag_width(std::uint64_t first_bucket_records) const {
  return PositionTag::for_node(first_bucket_records, layout_->framed()).width;
}

std::uint64_t DistributedWalk::bucket_region_bytes(std::uint64_t record_bytes, std::uint64_t n,
                                                   std::uint64_t bucket_records, std::uint32_t tag_width) const {
  return layout_->bucket_region_bytes(record_bytes, n, bucket_records, tag_width);
}

bool DistributedWalk::buckets_may_overflow() const { return layout_->buckets_may_overflow(); }

void DistributedWalk::scatter_chunks(io::BucketStore& store, const core::Node& root, const io::ByteExtents& chunk_data,
                                     const NodeFacts& facts, NodePath path, std::uint64_t first_chunk,
                                     std::uint64_t end_chunk, BucketTargets& targets, WalkStats& stats,
                                     const ScatterPoint* points, std::uint64_t first_record) const {
  const OutputSink no_output = [](const std::byte*, std::size_t) {};
  PlanWalk walk(*layout_, store, options_.walk, no_output);
  try {
    walk.scatter_chunks(root, chunk_data, facts, true, path, first_chunk, end_chunk, targets, points, first_record);
  } catch (...) {
    stats = walk.stats();
    throw;
  }
  stats = walk.stats();
}

std::uint32_t DistributedWalk::run_buckets(io::BucketStore& store, const OutputSink& sink, const core::Node& root,
                                           std::uint64_t p, std::uint64_t first, std::uint64_t end,
                                           const NodeFacts& facts, bool routed, StoredBuckets& buckets,
                                           WalkStats& stats, const EmitPoint* points) const {
  PlanWalk walk(*layout_, store, options_.walk, sink);
  try {
    const std::uint32_t passes = walk.run_buckets(root, p, first, end, facts, routed, buckets, points);
    stats = walk.stats();
    return passes;
  } catch (...) {
    stats = walk.stats();
    throw;
  }
}

}  // namespace extshuffle::ioperm
