#include "plan_walk.hpp"

// The IOPerm walk's conductor (plan_walk.hpp): where each node runs, and a
// split's steps in order. The steps live in files of their own:
// scatter_in_memory.cpp and scatter_routed.cpp (steps 1-3), run_buckets.cpp
// (step 4), leaf_windows.cpp and bucket_windows.cpp (leaves larger than
// memory), the layouts' run_in_memory (a node in RAM).
#include <algorithm>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "bucket_windows.hpp"
#include "leaf_windows.hpp"
#include "position_tag.hpp"
#include "split_checkpoint.hpp"

namespace extshuffle::ioperm {

PlanWalk::PlanWalk(const RecordLayout& layout, io::BucketStore& store, const WalkOptions& options,
                   const OutputSink& sink, device::HostMemory arena, bool root_mapped)
    : layout_(layout), store_(store), o_(options), output_(sink, options.output_records, stats_),
      memory_(arena ? std::move(arena) : device::allocate_host_memory(options.run.device, options.run.memory_bytes)),
      ctx_{o_, stats_, output_, memory_.get(), device::resolve_threads(options.run.threads), root_mapped} {}

WalkStats PlanWalk::run(const NodeFacts& root, const io::ByteExtents& data) {
  stats_.passes = run_node(core::Node{core::NodeId{0, 0}, root.records}, data, root, true);
  // While the arena is still held (nodes streamed through scratch space
  // run their buckets in it, not through run_in_memory).
  stats_.huge_page_bytes = std::max(stats_.huge_page_bytes, device::huge_page_bytes());
  return stats_;
}

std::uint32_t PlanWalk::run_node(const core::Node& node, const io::ByteExtents& data, const NodeFacts& facts,
                                 bool root) {
  if (node.records == 0 || !output_.wanted(node.id.first)) return 1;
  const NodePath path = choose_path(layout_, facts, o_.run.memory_bytes);
  switch (path) {
    case NodePath::kInRam:
      ++stats_.nodes_in_memory;
      layout_.run_in_memory(node, data, facts, root, ctx_);
      return 1;
    case NodePath::kLeafInWindows:
      ++stats_.nodes_in_windows;
      return run_leaf_in_windows(layout_, node, data, facts, root, store_, ctx_);
    case NodePath::kChunksInMemory:
    case NodePath::kRouted:
      break;
  }
  return run_split(node, data, facts, root, path);
}

std::uint64_t PlanWalk::chunk_memory_bytes(const NodeFacts& facts, NodePath path) const {
  const std::uint64_t p = core::bucket_count(facts.records, o_.run.constants);
  if (path == NodePath::kRouted) {
    return routed_split_memory(layout_, p, routed_open_chunks(facts), facts.max_record_bytes, o_.run.memory_bytes)
        .chunk_memory_bytes;
  }
  return layout_.split_layout(p, o_.run.memory_bytes).chunk_memory_bytes;
}

// Gustedt's IOPerm, one split: steps 1-3 stream the node's chunks into its
// buckets, step 4 runs each bucket.
std::uint32_t PlanWalk::run_split(const core::Node& node, const io::ByteExtents& data, const NodeFacts& facts,
                                  bool root, NodePath path) {
  const core::PlanConstants& c = o_.run.constants;
  const std::uint64_t n = node.records;
  const std::uint64_t p = core::bucket_count(n, c);
  const bool routed = path == NodePath::kRouted;
  // Buckets that are leaves larger than memory: routed into their windows.
  const BucketWindows windows = routed ? plan_bucket_windows(layout_, facts, o_.run.memory_bytes) : BucketWindows{};
  std::uint64_t chunk_memory = 0, buffer_bytes = 0;
  if (routed) {
    const RoutedSplitMemory m = routed_split_memory(layout_, p, routed_open_chunks(facts), facts.max_record_bytes,
                                                    o_.run.memory_bytes, &windows);
    chunk_memory = m.chunk_memory_bytes;
    buffer_bytes = m.bucket_buffer_bytes;
  } else {
    const SplitLayout m = layout_.split_layout(p, o_.run.memory_bytes);
    chunk_memory = m.chunk_memory_bytes;
    buffer_bytes = m.bucket_buffer_bytes;
  }
  const std::uint32_t tag_width =
      !windows.empty() ? windows.tag.width
                       : (routed ? PositionTag::for_node(core::bucket_records(n, p, 0), layout_.framed()).width : 0);
  ++stats_.nodes_on_disk;
  stats_.nodes_routed += routed ? 1 : 0;
  stats_.nodes_into_windows += windows.empty() ? 0 : 1;
  stats_.leaf_orders_on_disk += windows.orders_on_disk ? 1 : 0;

  // Routed into windows: the leaves' orders, in the arena's first bytes or
  // in scratch space below the split's.
  std::optional<LeafOrders> orders;
  if (!windows.empty() && windows.orders_on_disk) {
    orders.emplace(layout_, node, p, store_, ctx_.arena, ctx_);
  } else if (!windows.empty()) {
    orders.emplace(layout_, node, p, reinterpret_cast<std::uint32_t*>(ctx_.arena), ctx_);
  }
  // Where the records go: the buckets, or each bucket's windows; -n: those
  // wholly past the records wanted are not kept.
  const std::uint64_t destinations = windows.empty() ? p : windows.destinations();
  std::vector<std::uint64_t> region_bytes(destinations);
  std::unique_ptr<bool[]> kept(new bool[destinations]);
  for (std::uint64_t j = 0, d = 0; j < p; ++j) {
    const std::uint64_t m = core::bucket_records(n, p, j), first = node.id.first + core::bucket_first(n, p, j);
    const std::uint64_t per_window = windows.empty() ? m : windows.per_window[j];
    for (std::uint64_t w = 0; w * per_window < m; ++w, ++d) {
      region_bytes[d] =
          layout_.bucket_region_bytes(facts.record_bytes, n, std::min(per_window, m - w * per_window), tag_width);
      kept[d] = output_.wanted(first + w * per_window);
    }
  }
  io::BucketStore::Split split(store_, region_bytes, std::span<const bool>(kept.get(), destinations),
                               layout_.buckets_may_overflow(), ctx_.arena + chunk_memory, buffer_bytes);
  // Step 4's view of the buckets, declared before the checkpoint: a point's
  // release (its buckets' scratch discarded) may run on the syncer's thread
  // until `points` settles, which its destructor does on every way out.
  SplitBuckets stored(split);
  // The root of a checkpointed run: resumed where its last durable point
  // says, its points reported (walk_checkpoint.hpp).
  SplitCheckpoint points(root ? o_.checkpoint : nullptr, split, output_, c.leaf_records);
  LocalBuckets buckets(split);
  if (points.scatters()) {
    const io::ByteExtents from = points.data(data);
    if (routed) {
      scatter_routed(node, from, facts, root, points.first_chunk(), core::chunk_count(n, c), buckets, windows,
                     orders ? &*orders : nullptr, points.scatter_points(), points.first_record());
    } else {
      scatter_in_memory(node, from, root, points.first_chunk(), core::chunk_count(n, c), buckets,
                        points.scatter_points());
    }
  }
  if (orders) orders->discard();
  {
    PhaseTimer timer(stats_.seconds_writing);
    stats_.bytes_written += split.finish();
  }
  points.scatter_done();
  // 4. Each bucket in turn (or each leaf window by window); the last level
  // writes the output in order.
  std::uint32_t passes = 0;
  if (!windows.empty()) {
    passes = run_bucket_windows(layout_, node, windows, facts.max_record_bytes, split, store_, ctx_,
                                points.first_destination(), points.emit_points());
  } else {
    passes = run_buckets(node, p, points.first_destination(), p, facts, routed, stored, points.emit_points());
  }
  points.settle();
  return passes + 1;
}

void PlanWalk::scatter_chunks(const core::Node& node, const io::ByteExtents& chunk_data, const NodeFacts& facts,
                              bool root, NodePath path, std::uint64_t first_chunk, std::uint64_t end_chunk,
                              BucketTargets& targets, const ScatterPoint* points, std::uint64_t first_record) {
  if (path == NodePath::kRouted) {
    scatter_routed(node, chunk_data, facts, root, first_chunk, end_chunk, targets, BucketWindows{}, nullptr, points,
                   first_record);
  } else {
    scatter_in_memory(node, chunk_data, root, first_chunk, end_chunk, targets, points);
  }
}

}  // namespace extshuffle::ioperm
