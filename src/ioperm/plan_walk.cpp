#include "plan_walk.hpp"

#include <algorithm>
#include <future>
#include <optional>
#include <vector>

#include "bucket_windows.hpp"
#include "chunk_router.hpp"
#include "executor_support.hpp"
#include "extshuffle/core/recursive_matrix.hpp"
#include "leaf_windows.hpp"
#include "matrix_rows.hpp"
#include "position_tag.hpp"
#include "route_batch.hpp"
#include "tuning.hpp"

namespace extshuffle::ioperm {

PlanWalk::PlanWalk(const RecordLayout& layout, io::BucketStore& store, const WalkOptions& options,
                   const OutputSink& sink, device::HostMemory arena, bool root_loaded)
    : layout_(layout), store_(store), o_(options), output_(sink, options.output_records, stats_),
      memory_(arena ? std::move(arena) : device::allocate_host_memory(options.shuffle.device, options.memory_bytes)),
      ctx_{o_, stats_, output_, memory_.get(), device::resolve_threads(options.shuffle.threads), root_loaded} {}

WalkStats PlanWalk::run(const NodeFacts& root, const io::ByteExtents& data) {
  stats_.passes = run_node(core::Node{core::NodeId{0, 0}, root.records}, data, root, true);
  return stats_;
}

std::uint32_t PlanWalk::run_node(const core::Node& node, const io::ByteExtents& data, const NodeFacts& facts,
                                 bool root) {
  if (node.records == 0 || !output_.wanted(node.id.first)) return 1;
  const NodePath path = choose_path(layout_, facts, o_.memory_bytes);
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
  const std::uint64_t p = core::bucket_count(facts.records, o_.shuffle.constants);
  if (path == NodePath::kRouted) {
    return routed_split_memory(layout_, p, routed_open_chunks(facts), facts.max_record_bytes, o_.memory_bytes)
        .chunk_memory_bytes;
  }
  return layout_.split_layout(p, o_.memory_bytes).chunk_memory_bytes;
}

// Gustedt's IOPerm, one split: steps 1-3 stream the node's chunks into its
// buckets, step 4 runs each bucket.
std::uint32_t PlanWalk::run_split(const core::Node& node, const io::ByteExtents& data, const NodeFacts& facts,
                                  bool root, NodePath path) {
  const core::PlanConstants& c = o_.shuffle.constants;
  const std::uint64_t n = node.records;
  const std::uint64_t p = core::bucket_count(n, c);
  const bool routed = path == NodePath::kRouted;
  // Buckets that are leaves larger than memory: routed into their windows.
  const BucketWindows windows = routed ? plan_bucket_windows(layout_, facts, o_.memory_bytes) : BucketWindows{};
  std::uint64_t chunk_memory = 0, buffer_bytes = 0;
  if (routed) {
    const RoutedSplitMemory m = routed_split_memory(layout_, p, routed_open_chunks(facts), facts.max_record_bytes,
                                                    o_.memory_bytes, &windows);
    chunk_memory = m.chunk_memory_bytes;
    buffer_bytes = m.bucket_buffer_bytes;
  } else {
    const SplitLayout m = layout_.split_layout(p, o_.memory_bytes);
    chunk_memory = m.chunk_memory_bytes;
    buffer_bytes = m.bucket_buffer_bytes;
  }
  const std::uint32_t tag_width =
      !windows.empty() ? windows.tag.width
                       : (routed ? PositionTag::for_node(core::bucket_records(n, p, 0), layout_.text()).width : 0);
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
  LocalBuckets buckets(split);
  if (routed) {
    scatter_routed(node, data, facts, root, 0, core::chunk_count(n, c), buckets, windows,
                   orders ? &*orders : nullptr);
    if (orders) orders->discard();
  } else {
    scatter_in_memory(node, data, root, 0, core::chunk_count(n, c), buckets);
  }
  {
    PhaseTimer timer(stats_.seconds_writing);
    stats_.bytes_written += split.finish();
  }
  // 4. Each bucket in turn (or each leaf window by window); the last level
  // writes the output in order.
  if (!windows.empty()) {
    return run_bucket_windows(layout_, node, windows, facts.max_record_bytes, split, store_, ctx_) + 1;
  }
  SplitBuckets stored(split);
  return run_buckets(node, p, 0, p, facts, routed, stored) + 1;
}

void PlanWalk::scatter_chunks(const core::Node& node, const io::ByteExtents& chunk_data, const NodeFacts& facts,
                              bool root, NodePath path, std::uint64_t first_chunk, std::uint64_t end_chunk,
                              BucketTargets& targets) {
  if (path == NodePath::kRouted) {
    scatter_routed(node, chunk_data, facts, root, first_chunk, end_chunk, targets, BucketWindows{}, nullptr);
  } else {
    scatter_in_memory(node, chunk_data, root, first_chunk, end_chunk, targets);
  }
}

// Steps 1-3 with the chunks in memory: groups of chunks read ahead,
// shuffled as one batch while their rows are drawn, cut into slices.
void PlanWalk::scatter_in_memory(const core::Node& node, const io::ByteExtents& chunk_data, bool root,
                                 std::uint64_t first_chunk, std::uint64_t end_chunk, BucketTargets& targets) {
  const core::PlanConstants& c = o_.shuffle.constants;
  const std::uint64_t p = core::bucket_count(node.records, c);
  const SplitLayout layout = layout_.split_layout(p, o_.memory_bytes);
  ChunkRows rows(o_.shuffle.seed, node, c);
  std::vector<std::uint64_t> group_rows;    // the rows of the current chunk group
  std::vector<std::uint64_t> slice_starts;  // per chunk of a group: where each bucket's slice starts
  const auto groups =
      layout_.open_chunk_groups(node, chunk_data, root, first_chunk, end_chunk, layout.chunk_memory_bytes, ctx_);
  for (std::uint64_t i = first_chunk; i < end_chunk;) {
    const std::uint64_t count = groups->next(i);
    {
      // 2. Shuffle the group's chunks in one parallel batch, while 1. the
      // group's rows of the matrix are drawn on a thread of their own.
      PhaseTimer timer(stats_.seconds_shuffling);
      auto drawn = std::async(std::launch::async, [&] { rows.draw(i, i + count, group_rows); });
      groups->shuffle(i, count);
      drawn.get();
    }
    {
      // 3. Every chunk's slice appended to its bucket, bucket ranges on
      // all threads (a memory-bound copy; each bucket has one writer).
      PhaseTimer timer(stats_.seconds_scattering);
      slice_starts.resize(count * (p + 1));
      for (std::uint64_t g = 0; g < count; ++g) {
        const std::uint64_t* row = group_rows.data() + g * p;
        std::uint64_t* starts = slice_starts.data() + g * (p + 1);
        starts[0] = 0;
        for (std::uint64_t j = 0; j < p; ++j) starts[j + 1] = starts[j] + row[j];
      }
      scatter_by_bucket_ranges(p, ctx_.threads, [&](std::uint64_t j) {
        for (std::uint64_t g = 0; g < count; ++g) {
          const std::uint64_t* starts = slice_starts.data() + g * (p + 1);
          if (starts[j + 1] > starts[j]) groups->append_slice(g, starts[j], starts[j + 1], targets.bucket(j));
        }
      });
    }
    stats_.bytes_written += targets.group_done();
    ctx_.publish_progress();
    i += count;
  }
  groups->finish();
}

// Steps 1-3 with chunks larger than memory: the node's records are read in
// order once, and each goes straight to its place in its bucket (where the
// shuffle of its chunk and the chunk's row put it: chunk_router.hpp),
// behind a tag of that place; the bucket's reader puts it there. With
// `windows` (and the leaves' `orders`), to its place in the window of its
// leaf's output instead.
void PlanWalk::scatter_routed(const core::Node& node, const io::ByteExtents& chunk_data, const NodeFacts& facts,
                              bool root, std::uint64_t first_chunk, std::uint64_t end_chunk, BucketTargets& targets,
                              const BucketWindows& windows, LeafOrders* orders) {
  const core::PlanConstants& c = o_.shuffle.constants;
  const std::uint64_t n = node.records;
  const std::uint64_t p = core::bucket_count(n, c);
  const std::uint32_t open_chunks = routed_open_chunks(facts);
  const RoutedSplitMemory m =
      routed_split_memory(layout_, p, open_chunks, facts.max_record_bytes, o_.memory_bytes, &windows);
  const std::uint64_t destinations = windows.empty() ? p : windows.destinations();
  std::byte* router_memory = ctx_.arena + windows.orders_bytes;  // after the orders held in memory
  std::byte* cursor = ctx_.arena + m.router_bytes;
  std::byte* stream_arrays = cursor;
  cursor += RecordStream::arrays_bytes(m.max_batch);
  RouteArrays route = RouteArrays::carve_from(cursor, m.max_batch, destinations);
  ChunkRouter router(o_.shuffle.seed, node, c, first_chunk, router_memory, open_chunks, ctx_.threads, orders);
  std::optional<PositionTag> in_tag;
  if (facts.tagged) in_tag = PositionTag::for_node(n, layout_.text());
  const PositionTag out_tag =
      windows.empty() ? PositionTag::for_node(core::bucket_records(n, p, 0), layout_.text()) : windows.tag;
  const RecordFraming framing = layout_.framing(root);
  RecordStream stream(chunk_data, framing, in_tag, core::chunk_range_records(n, first_chunk, end_chunk, c),
                      core::chunk_first(first_chunk, c), cursor, m.space_bytes, stream_arrays, m.max_batch,
                      o_.memory_bytes, ctx_);
  RecordBatch batch;
  while (stream.next(batch)) {
    for (std::uint64_t first = 0; first < batch.count;) {
      std::uint64_t end = first;
      {
        // 1-2. The rows and inverse permutations of the chunks reached.
        PhaseTimer timer(stats_.seconds_shuffling);
        end += router.open_for(batch.positions + first, batch.count - first);
      }
      // 3. Each record to its place in its bucket.
      PhaseTimer timer(stats_.seconds_scattering);
      route_batch(batch, first, end, destinations, out_tag, route, ctx_.threads,
                  [&](std::uint64_t position, std::uint64_t& destination, std::uint64_t& there) {
                    const ChunkRouter::Destination d = router.route(position);
                    if (windows.empty()) {
                      destination = d.bucket;
                      there = d.position;
                    } else {
                      const std::uint64_t w = d.output / windows.per_window[d.bucket];
                      destination = windows.first[d.bucket] + w;
                      there = d.output - w * windows.per_window[d.bucket];
                    }
                  },
                  [&](std::uint64_t j) -> io::ByteSink& { return targets.bucket(j); });
      for (std::uint64_t k = first; k < end; ++k) router.routed(batch.positions[k]);
      first = end;
    }
    stats_.bytes_written += targets.group_done();
    ctx_.publish_progress();
  }
}

// Consecutive buckets that fit in a third of the budget together are read
// with one request, the next group while this one runs, and run from memory
// with the last third as workspace; larger buckets run on their own.
std::uint32_t PlanWalk::run_buckets(const core::Node& node, std::uint64_t p, std::uint64_t first, std::uint64_t end,
                                    const NodeFacts& facts, bool routed, StoredBuckets& split) {
  const std::uint64_t third = align_down(o_.memory_bytes / tuning::kBucketGroupBudgetDivisor, 64);
  const std::uint32_t tag_width =
      routed ? PositionTag::for_node(core::bucket_records(node.records, p, 0), layout_.text()).width : 0;
  auto child_facts = [&](std::uint64_t j) {
    const std::uint64_t records = core::bucket_records(node.records, p, j);
    return NodeFacts{records, split.bucket(j).bytes - records * tag_width, routed, facts.max_record_bytes,
                     node.id.depth + 1};
  };
  struct Group {
    std::uint64_t first, end;  // buckets [first, end)
    std::uint64_t bytes;
    bool alone;                // too large to run from a group: run_node() on its own
  };
  std::vector<std::uint64_t> bucket_bytes(p);
  std::vector<Group> groups;
  for (std::uint64_t j = first; j < end && output_.wanted(node.id.first + core::bucket_first(node.records, p, j)); ++j) {
    const std::uint64_t bytes = split.bucket(j).bytes;
    bucket_bytes[j] = bytes;
    if (bytes > third || !layout_.runs_in_group(child_facts(j), bytes, third)) {
      groups.push_back({j, j + 1, bytes, true});
    } else if (groups.empty() || groups.back().alone || groups.back().bytes + bytes > third) {
      groups.push_back({j, j + 1, bytes, false});
    } else {
      groups.back().end = j + 1;
      groups.back().bytes += bytes;
    }
  }
  std::byte* inputs[2] = {ctx_.arena, ctx_.arena + third};
  std::byte* output = ctx_.arena + 2 * third;
  io::ByteExtents extents[2];
  std::optional<io::ExtentReader> reader;
  auto start_read = [&](std::size_t g) {
    if (g >= groups.size() || groups[g].alone) return;
    extents[g % 2] = split.buckets(groups[g].first, groups[g].end);
    reader.emplace(extents[g % 2]);
    reader->start(inputs[g % 2], groups[g].bytes);
    stats_.bytes_read += groups[g].bytes;
  };
  std::uint32_t deepest = 1;
  start_read(0);
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const Group& group = groups[g];
    if (group.alone) {
      deepest = std::max(deepest, run_node(core::bucket_node(node, p, group.first), split.bucket(group.first),
                                           child_facts(group.first), false));
      start_read(g + 1);
    } else {
      {
        PhaseTimer timer(stats_.seconds_reading);
        reader->finish();
      }
      start_read(g + 1);
      stats_.nodes_in_memory += group.end - group.first;
      layout_.run_buckets_in_memory(
          node, p, group.first, group.end,
          std::span<const std::uint64_t>(bucket_bytes).subspan(group.first, group.end - group.first), routed,
          inputs[g % 2], output, ctx_);
    }
    for (std::uint64_t j = group.first; j < group.end; ++j) split.discard(j);
  }
  return deepest;
}

}  // namespace extshuffle::ioperm
