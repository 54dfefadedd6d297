#include "plan_walk.hpp"

#include <algorithm>
#include <future>
#include <optional>
#include <vector>

#include "executor_support.hpp"
#include "matrix_rows.hpp"
#include "tuning.hpp"

namespace extshuffle::driver {

PlanWalk::PlanWalk(const RecordLayout& layout, io::BucketStore& store, const ExternalOptions& options,
                   const OutputSink& sink)
    : layout_(layout), store_(store), o_(options), output_(sink, options.output_records, stats_),
      memory_(device::allocate_host_memory(options.device, options.memory_bytes)),
      ctx_{o_, stats_, output_, memory_.get(), device::resolve_threads(options.threads)} {}

ExternalStats PlanWalk::run(std::uint64_t records, const io::ByteExtents& data) {
  stats_.passes = run_node(core::Node{core::NodeId{0, 0}, records}, data, true);
  return stats_;
}

std::uint32_t PlanWalk::run_node(const core::Node& node, const io::ByteExtents& data, bool root) {
  if (node.records == 0 || !output_.wanted(node.id.first)) return 1;
  if (layout_.fits_in_memory(node.records, data.bytes, o_.memory_bytes)) {
    ++stats_.nodes_in_memory;
    layout_.run_in_memory(node, data, root, ctx_);
    return 1;
  }
  if (core::is_leaf(node.records, o_.constants)) {
    ++stats_.nodes_in_memory;
    layout_.gather_leaf(node, data, root, ctx_, [&](const Window& window) { emit_window(window); });
    return 1;
  }
  return run_split(node, data, root);
}

void PlanWalk::emit_window(const Window& window) {
  const std::uint64_t take = std::min(window.end - window.first, output_.records_left());
  if (take > 0) output_.write(window.bytes, window.offset(window.first + take), take);
  ctx_.publish_progress();
}

// Gustedt's IOPerm, one split: steps 1-3 stream the node's chunks into its
// buckets, step 4 runs each bucket.
std::uint32_t PlanWalk::run_split(const core::Node& node, const io::ByteExtents& data, bool root) {
  const core::PlanConstants& c = o_.constants;
  const std::uint64_t n = node.records;
  const std::uint64_t p = core::bucket_count(n, c);
  const SplitLayout layout = layout_.split_layout(p, o_.memory_bytes);
  ++stats_.nodes_on_disk;

  std::vector<std::uint64_t> region_bytes(p);
  std::unique_ptr<bool[]> kept(new bool[p]);
  for (std::uint64_t j = 0; j < p; ++j) {
    region_bytes[j] = layout_.bucket_region_bytes(data.bytes, n, core::bucket_records(n, p, j));
    kept[j] = output_.wanted(node.id.first + core::bucket_first(n, p, j));  // -n: later buckets are not kept
  }
  io::BucketStore::Split split(store_, region_bytes, std::span<const bool>(kept.get(), p),
                               layout_.buckets_may_overflow(), ctx_.arena + layout.chunk_memory_bytes,
                               layout.bucket_buffer_bytes);
  LocalBuckets buckets(split);
  scatter_chunks(node, data, root, 0, core::chunk_count(n, c), buckets);
  {
    PhaseTimer timer(stats_.seconds_writing);
    stats_.bytes_written += split.finish();
  }
  // 4. Each bucket in turn; the last level writes the output in order.
  return run_buckets(node, p, split) + 1;
}

void PlanWalk::scatter_chunks(const core::Node& node, const io::ByteExtents& chunk_data, bool root,
                              std::uint64_t first_chunk, std::uint64_t end_chunk, BucketTargets& targets) {
  const core::PlanConstants& c = o_.constants;
  const std::uint64_t n = node.records;
  const std::uint64_t p = core::bucket_count(n, c);
  const SplitLayout layout = layout_.split_layout(p, o_.memory_bytes);
  ChunkRows rows(o_.seed, node, c);
  std::vector<std::uint64_t> group_rows;    // the rows of the current chunk group
  std::vector<std::uint64_t> slice_starts;  // per chunk of a group: where each bucket's slice starts
  const auto groups =
      layout_.open_chunk_groups(node, chunk_data, root, first_chunk, end_chunk, layout.chunk_memory_bytes, ctx_);
  for (std::uint64_t i = first_chunk; i < end_chunk;) {
    const std::uint64_t count = groups->next(i);
    if (count == 0) {
      // A chunk larger than the chunk memory: 1. its row, 2. its records
      // in shuffled order window by window, 3. cut into the row's slices.
      const std::uint64_t m = core::chunk_records(n, i, c);
      rows.draw(i, i + 1, group_rows);
      const std::uint64_t* row = group_rows.data();
      std::uint64_t bucket = 0, left_in_slice = 0;
      groups->gather_chunk(i, m, core::shuffle_bijection(o_.seed, {node.id, core::Purpose::kChunkShuffle, i}, m),
                           [&](const Window& w) {
                             PhaseTimer timer(stats_.seconds_scattering);
                             for (std::uint64_t k = w.first; k < w.end;) {
                               while (left_in_slice == 0) left_in_slice = row[bucket++];
                               const std::uint64_t take = std::min(left_in_slice, w.end - k);
                               targets.bucket(bucket - 1).append(w.bytes + w.offset(k), w.offset(k + take) - w.offset(k));
                               k += take;
                               left_in_slice -= take;
                             }
                             stats_.bytes_written += targets.group_done();
                             ctx_.publish_progress();
                           });
      ++i;
      continue;
    }
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

// Consecutive buckets that fit in a third of the budget together are read
// with one request, the next group while this one runs, and run from memory
// with the last third as workspace; larger buckets run on their own.
std::uint32_t PlanWalk::run_buckets(const core::Node& node, std::uint64_t p, io::BucketStore::Split& split) {
  const std::uint64_t third = align_down(o_.memory_bytes / tuning::kBucketGroupBudgetDivisor, 64);
  struct Group {
    std::uint64_t first, end;  // buckets [first, end)
    std::uint64_t bytes;
    bool alone;                // too large to run from a group: run_node() on its own
  };
  std::vector<std::uint64_t> bucket_bytes(p);
  std::vector<Group> groups;
  for (std::uint64_t j = 0; j < p && output_.wanted(node.id.first + core::bucket_first(node.records, p, j)); ++j) {
    const std::uint64_t bytes = split.bucket(j).bytes;
    bucket_bytes[j] = bytes;
    if (bytes > third || !layout_.runs_in_group(core::bucket_records(node.records, p, j), bytes, third)) {
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
      deepest = std::max(deepest, run_node(core::bucket_node(node, p, group.first), split.bucket(group.first), false));
      start_read(g + 1);
    } else {
      {
        PhaseTimer timer(stats_.seconds_reading);
        reader->finish();
      }
      start_read(g + 1);
      stats_.nodes_in_memory += group.end - group.first;
      layout_.run_buckets_in_memory(node, p, group.first, group.end,
                                    std::span<const std::uint64_t>(bucket_bytes).subspan(group.first, group.end - group.first),
                                    inputs[g % 2], output, ctx_);
    }
    for (std::uint64_t j = group.first; j < group.end; ++j) split.discard(j);
  }
  return deepest;
}

Schedule plan_schedule(const RecordLayout& layout, const core::PlanConstants& constants, std::uint64_t records,
                       std::uint64_t bytes, std::uint64_t budget) {
  Schedule s;
  s.levels = core::plan_levels(records, constants);
  // Walk one representative node per level: sizes within a level differ by
  // at most one record, so they share a fate (except at the exact boundary,
  // where the count below is an estimate).
  std::uint64_t n = records, node_bytes = bytes, nodes = 1;
  s.passes = 1;
  while (n > 0 && !layout.fits_in_memory(n, node_bytes, budget)) {
    if (core::is_leaf(n, constants)) {  // a leaf larger than memory: gathered in windows
      s.gather_by_index = true;
      break;
    }
    const std::uint64_t p = core::bucket_count(n, constants);
    s.nodes_on_disk += nodes;
    s.gather_by_index = s.gather_by_index || layout.split_layout(p, budget).chunks_gathered;
    s.bytes_read += bytes;
    s.bytes_written += bytes;
    const std::uint64_t child = core::bucket_records(n, p, 0);
    node_bytes = static_cast<std::uint64_t>(static_cast<unsigned __int128>(node_bytes) * child / n);
    n = child;
    nodes *= p;
    ++s.passes;
  }
  s.nodes_in_memory = records == 0 ? 0 : nodes;
  s.bytes_read += bytes;
  s.bytes_written += bytes;
  return s;
}

}  // namespace extshuffle::driver
