// Steps 1-3 of a split whose chunks are larger than memory (docs/design.md,
// "Large records"): each record is routed to its place in its bucket by its
// chunk's row and inverse permutation (chunk_router.hpp), behind a position
// tag, in one pass over the node.
#include <optional>

#include "bucket_windows.hpp"
#include "chunk_router.hpp"
#include "walk_support.hpp"
#include "plan_walk.hpp"
#include "position_tag.hpp"
#include "route_batch.hpp"

namespace extshuffle::ioperm {

// Steps 1-3 with chunks larger than memory: the node's records are read in
// order once, and each goes straight to its place in its bucket (where the
// shuffle of its chunk and the chunk's row put it: chunk_router.hpp),
// behind a tag of that place; the bucket's reader puts it there. With
// `windows` (and the leaves' `orders`), to its place in the window of its
// leaf's output instead.
void PlanWalk::scatter_routed(const core::Node& node, const io::ByteExtents& chunk_data, const NodeFacts& facts,
                              bool root, std::uint64_t first_chunk, std::uint64_t end_chunk, BucketTargets& targets,
                              const BucketWindows& windows, LeafOrders* orders, const ScatterPoint* points,
                              std::uint64_t first_record) {
  const core::PlanConstants& c = o_.run.constants;
  const std::uint64_t n = node.records;
  const std::uint64_t p = core::bucket_count(n, c);
  const std::uint32_t open_chunks = routed_open_chunks(facts);
  const RoutedSplitMemory m =
      routed_split_memory(layout_, p, open_chunks, facts.max_record_bytes, o_.run.memory_bytes, &windows);
  const std::uint64_t destinations = windows.empty() ? p : windows.destinations();
  std::byte* router_memory = ctx_.arena + windows.orders_bytes;  // after the orders held in memory
  std::byte* cursor = ctx_.arena + m.router_bytes;
  std::byte* stream_arrays = cursor;
  cursor += RecordStream::arrays_bytes(m.max_batch);
  RouteArrays route = RouteArrays::carve_from(cursor, m.max_batch, destinations);
  const std::uint64_t first = first_record == UINT64_MAX ? core::chunk_first(first_chunk, c) : first_record;
  ChunkRouter router(o_.run.seed, node, c, first_chunk, router_memory, open_chunks, ctx_.threads, orders,
                     first - core::chunk_first(first_chunk, c));
  std::optional<PositionTag> in_tag;
  if (facts.tagged) in_tag = PositionTag::for_node(n, layout_.framed());
  const PositionTag out_tag =
      windows.empty() ? PositionTag::for_node(core::bucket_records(n, p, 0), layout_.framed()) : windows.tag;
  const RecordFraming framing = layout_.framing(root);
  RecordStream stream(
      chunk_data, framing, in_tag,
      core::chunk_range_records(n, first_chunk, end_chunk, c) - (first - core::chunk_first(first_chunk, c)), first,
      cursor, m.space_bytes, stream_arrays, m.max_batch, o_.run.memory_bytes, ctx_);
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
    if (points) (*points)(stream.next_position(), stream.consumed_bytes());
  }
}

}  // namespace extshuffle::ioperm
