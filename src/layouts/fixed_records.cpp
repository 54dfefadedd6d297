#include "fixed_records.hpp"

#include <algorithm>
#include <cstring>
#include <optional>
#include <vector>

#include "file_source.hpp"
#include "ioperm/chunk_router.hpp"
#include "ioperm/walk_support.hpp"
#include "extshuffle/device/host_memory.hpp"
#include "extshuffle/device/node_on_device.hpp"
#include "extshuffle/errors.hpp"
#include "extshuffle/io/mapped_bytes.hpp"
#include "extshuffle/io/scratch_damage.hpp"
#include "ioperm/memory_plan.hpp"
#include "ioperm/tuning.hpp"

namespace extshuffle::ioperm {

// Records mapped: a leaf runs where they lie, shuffled or gathered from
// there, with no buffer of its own (the arena is its workspace). A split
// still needs its node buffer, the records in bucket order: read from the
// mapping in batches, its chunks' shuffles gathered through 4 KiB pages
// where the read buffers had huge ones, and for 8-byte records that cost
// as much CPU as the read() copy it saved (docs/benchmarks.md, "Fixed-size
// inputs mapped"); it reads its records as without a mapping, as does the
// GPU.
std::uint64_t FixedRecords::mapped_arena_bytes(const NodeFacts& node, std::uint64_t in_memory) const {
  const InRam way = way_for(node, in_memory);
  if (way == InRam::kDevice || !core::is_leaf(node.records, o_.run.constants)) return UINT64_MAX;
  return MemoryPlan::workspace_bytes(node.records, o_.shuffle(),
                                     way == InRam::kPlaceIndexed ? MemoryMode::kIndex : MemoryMode::kShuffle);
}

// Placement reads through a stream of a 16th of the node, at most
// kPlacementStreamSpace, at least what holds one record.
std::uint64_t FixedRecords::placement_space(const NodeFacts& node) const {
  const std::uint64_t floor = minimum_stream_space(*this, r_);
  return std::clamp<std::uint64_t>(align_up(node.records * r_ / 16, 64), floor,
                                   std::max(tuning::kPlacementStreamSpace, floor));
}

std::uint64_t FixedRecords::placement_bytes(const NodeFacts& node) const {
  const core::PlanConstants& c = o_.run.constants;
  const std::uint64_t router = core::is_leaf(node.records, c)
                                   ? 0
                                   : ChunkRouter::memory_bytes(c, core::bucket_count(node.records, c),
                                                               routed_open_chunks(node));
  return router + RecordStream::arrays_bytes(tuning::kPlacementBatch) + placement_space(node);
}

std::uint64_t FixedRecords::way_bytes(const NodeFacts& node, InRam way) const {
  const std::uint64_t n = node.records;
  const std::uint64_t records_bytes = align_up(n * r_, 64);
  switch (way) {
    case InRam::kDevice:
      if (node.tagged || o_.run.device != device::Device::kCuda ||
          !device::node_fits_on_device(n, r_, o_.run.constants)) {
        return UINT64_MAX;
      }
      return 2 * records_bytes;
    case InRam::kRead: {
      if (node.tagged || !MemoryPlan::shuffles_chunks(o_.shuffle())) return UINT64_MAX;
      const std::uint64_t workspace = MemoryPlan::workspace_bytes(n, o_.shuffle(), MemoryMode::kShuffle);
      // A leaf is read whole and shuffled into the workspace; a larger node
      // reads its batches into two buffers beside the workspace.
      if (core::is_leaf(n, o_.run.constants)) return records_bytes + workspace;
      return records_bytes + workspace + 2 * MemoryPlan::batch_bytes(n, o_.shuffle());
    }
    case InRam::kReadIndexed:
      if (node.tagged || core::is_leaf(n, o_.run.constants)) return UINT64_MAX;
      return records_bytes + MemoryPlan::workspace_bytes(n, o_.shuffle(), MemoryMode::kIndex) +
             read_indexed_buffers(node) * align_up(o_.run.constants.leaf_records * r_, 64);
    case InRam::kPlaceShuffled:
      return records_bytes +
             std::max(placement_bytes(node), MemoryPlan::workspace_bytes(n, o_.shuffle(), MemoryMode::kShuffle));
    case InRam::kPlaceIndexed:
      return records_bytes +
             std::max(placement_bytes(node), MemoryPlan::workspace_bytes(n, o_.shuffle(), MemoryMode::kIndex));
  }
  return UINT64_MAX;
}

// A split read a chunk at a time and moved by index reads into two chunk
// buffers (the next chunk read while this one is gathered) where both fit
// in what a node held once may use beside its records, else into one.
std::uint64_t FixedRecords::read_indexed_buffers(const NodeFacts& node) const {
  const std::uint64_t records_bytes = align_up(node.records * r_, 64);
  const std::uint64_t two = MemoryPlan::workspace_bytes(node.records, o_.shuffle(), MemoryMode::kIndex) +
                            2 * align_up(o_.run.constants.leaf_records * r_, 64);
  return two <= MemoryPlan::held_once_workspace_bytes(records_bytes) ? 2 : 1;
}

// The fastest way that fits the budget and holds the node once: beside its
// records at most MemoryPlan::held_once_workspace_bytes() (a larger budget
// never buys a second copy: a leaf of 512-byte rows shuffled into a copy of
// itself was both twice the memory and slower than moving it by index).
// The GPU's way is the exception: the device needs a host buffer to copy
// its output into, and a read-only input cannot be one.
FixedRecords::InRam FixedRecords::way_for(const NodeFacts& node, std::uint64_t budget) const {
  const std::uint64_t records_bytes = align_up(node.records * r_, 64);
  const std::uint64_t held_once = records_bytes + MemoryPlan::held_once_workspace_bytes(records_bytes);
  for (const InRam way : {InRam::kDevice, InRam::kRead, InRam::kReadIndexed, InRam::kPlaceShuffled}) {
    const std::uint64_t bytes = way_bytes(node, way);
    if (bytes <= budget && (way == InRam::kDevice || bytes <= held_once)) return way;
  }
  return InRam::kPlaceIndexed;
}

std::uint64_t FixedRecords::in_memory_bytes(const NodeFacts& node) const {
  return std::min({way_bytes(node, InRam::kRead), way_bytes(node, InRam::kPlaceShuffled),
                   way_bytes(node, InRam::kPlaceIndexed)});
}

std::uint64_t FixedRecords::in_memory_bytes(const NodeFacts& node, std::uint64_t budget) const {
  return way_bytes(node, way_for(node, budget));
}

namespace {

// The driving thread's time of a node in RAM: what it waited for reads and
// for output, and the rest shuffling. Output written on the output thread
// overlapped the shuffle, and only the driving thread's wait for it
// (`output_wait_seconds`; negative where the output was written on this
// thread) counts as writing.
void add_in_ram_times(RunContext& ctx, Clock::time_point start, double writing_before, double reading,
                      double output_wait_seconds) {
  const double writing = output_wait_seconds >= 0 ? output_wait_seconds : ctx.stats.seconds_writing - writing_before;
  ctx.stats.seconds_writing = writing_before + writing;
  ctx.stats.seconds_reading += reading;
  ctx.stats.seconds_shuffling += std::max(0.0, since(start) - reading - writing);
  ctx.stats.huge_page_bytes = std::max(ctx.stats.huge_page_bytes, device::huge_page_bytes());
}

}  // namespace

void FixedRecords::run_in_memory(const core::Node& node, const io::ByteExtents& data, const NodeFacts& facts,
                                 bool root, RunContext& ctx) const {
  const std::uint64_t n = node.records;
  const InRam way = way_for(facts, o_.run.memory_bytes);
  const MemoryMode mode =
      way == InRam::kPlaceIndexed || way == InRam::kReadIndexed ? MemoryMode::kIndex : MemoryMode::kShuffle;
  const bool leaf = core::is_leaf(n, o_.run.constants);
  // The records mapped (mapped_arena_bytes): read where they lie.
  const std::byte* mapped = root && ctx.root_mapped && data.extents.size() == 1 && data.extents[0].file == nullptr
                                ? data.extents[0].memory
                                : nullptr;
  std::byte* node_buffer = ctx.arena;
  std::byte* workspace = mapped != nullptr && leaf ? ctx.arena : node_buffer + align_up(n * r_, 64);
  double reading = 0;
  bool overlapped = false;
  const Clock::time_point start = Clock::now();
  const double writing_before = ctx.stats.seconds_writing;
  MemoryPlan plan(
      o_.shuffle(), mode, workspace,
      [&](const std::byte* out, std::size_t bytes) {
        ctx.output.write_fixed(out, bytes, r_);
        ctx.publish_progress();
      },
      [&](std::uint64_t first) { return ctx.output.wanted(first); });
  if (way == InRam::kDevice) {
    run_on_device(node, data, node_buffer, workspace, reading, ctx);
  } else if (mapped != nullptr && leaf) {
    // A mapped leaf: its pages read at once, then shuffled (or gathered by
    // index into one half of the staging while the other is written) in place.
    {
      PhaseTimer timer(reading);
      io::MappedBytes::populate(mapped, n * r_);
      ctx.stats.bytes_read += n * r_;
    }
    overlapped = mode == MemoryMode::kIndex;
    if (overlapped) plan.overlap_output(nullptr);
    plan.run_buckets(node, mapped);
  } else if (way == InRam::kRead && leaf) {
    {
      PhaseTimer timer(reading);
      io::ExtentReader(data).read_now(node_buffer, n * r_);
      ctx.stats.bytes_read += n * r_;
    }
    MemorySource source(node_buffer, r_);
    plan.run(node, source, nullptr);
  } else if (way == InRam::kReadIndexed) {
    // Chunk by chunk, each gathered through its permutation into the
    // buckets (with two buffers, while the next is read; a chunk of
    // 32-byte records took half the CPU of placing its records one by one,
    // docs/benchmarks.md, "32-byte records in RAM"); then the leaves
    // gathered into one half of the staging while the other is written.
    std::byte* buffers = workspace + MemoryPlan::workspace_bytes(n, o_.shuffle(), mode);
    FileSource source(data, r_, n, o_.run.constants.leaf_records, buffers, read_indexed_buffers(facts), ctx, reading);
    plan.overlap_output(nullptr);
    overlapped = true;
    plan.run(node, source, node_buffer);
  } else if (way == InRam::kRead) {
    // Reading, shuffling and writing overlapped: the first chunks are
    // shuffled while the next are read; once all are read, the source's
    // buffers take turns with the workspace as the leaves' output, written
    // on a thread of its own while the next leaves are shuffled.
    std::byte* buffers = workspace + MemoryPlan::workspace_bytes(n, o_.shuffle(), mode);
    FileSource source(data, r_, n, MemoryPlan::batch_chunks(n, o_.shuffle()) * o_.run.constants.leaf_records, buffers,
                      2, ctx, reading);
    plan.overlap_output(buffers);
    overlapped = true;
    plan.run(node, source, node_buffer);
  } else {
    place(node, data, facts, node_buffer, workspace, ctx);
    // Moved by index, the records are gathered into one half of the staging
    // while the other half is written.
    if (mode == MemoryMode::kIndex) {
      plan.overlap_output(nullptr);
      overlapped = true;
    }
    plan.run_buckets(node, node_buffer);
  }
  add_in_ram_times(ctx, start, writing_before, reading, overlapped ? plan.output_wait_seconds() : -1.0);
}

// The whole node on the GPU: read while the first chunks go in, the output
// handed on as it comes back.
void FixedRecords::run_on_device(const core::Node& node, const io::ByteExtents& data, std::byte* node_buffer,
                                 std::byte* workspace, double& reading, RunContext& ctx) const {
  const std::uint64_t n = node.records;
  io::ExtentReader reader(data);
  reader.start(node_buffer, n * r_);
  ctx.stats.bytes_read += n * r_;
  device::NodeOnDeviceOptions on_device;
  on_device.threads = ctx.threads;
  on_device.await_input = [&](std::uint64_t records) {
    PhaseTimer timer(reading);
    reader.wait_for(records * r_);
  };
  on_device.emit = [&](const std::byte* out, std::size_t bytes) {
    ctx.output.write_fixed(out, bytes, r_);
    ctx.publish_progress();
  };
  device::shuffle_node_on_device(node, o_.run.seed, o_.run.constants, node_buffer, workspace, r_, on_device);
  PhaseTimer timer(reading);
  reader.finish();
}

void FixedRecords::place(const core::Node& node, const io::ByteExtents& data, const NodeFacts& facts,
                         std::byte* node_buffer, std::byte* memory, RunContext& ctx) const {
  const core::PlanConstants& c = o_.run.constants;
  const std::uint64_t n = node.records;
  const bool leaf = core::is_leaf(n, c);
  const std::uint64_t p = leaf ? 1 : core::bucket_count(n, c);
  std::byte* cursor = memory;
  std::optional<ChunkRouter> router;
  if (!leaf) {
    router.emplace(o_.run.seed, node, c, 0, cursor, routed_open_chunks(facts), ctx.threads);
    cursor += ChunkRouter::memory_bytes(c, p, routed_open_chunks(facts));
  }
  std::byte* arrays = cursor;
  cursor += RecordStream::arrays_bytes(tuning::kPlacementBatch);
  std::optional<PositionTag> tag;
  if (facts.tagged) tag = PositionTag::for_node(n, false);
  const RecordFraming framing = this->framing(false);
  RecordStream stream(data, framing, tag, n, 0, cursor, placement_space(facts), arrays, tuning::kPlacementBatch,
                      o_.run.memory_bytes, ctx);
  RecordBatch batch;
  while (stream.next(batch)) {
    for (std::uint64_t first = 0; first < batch.count;) {
      const std::uint64_t end = router ? first + router->open_for(batch.positions + first, batch.count - first)
                                       : batch.count;
      const auto from = static_cast<std::int64_t>(first), to_end = static_cast<std::int64_t>(end);
#pragma omp parallel for schedule(static) num_threads(ctx.threads) \
    if ((to_end - from) * static_cast<std::int64_t>(r_) >= static_cast<std::int64_t>(tuning::kParallelScatterBytes))
      for (std::int64_t k = from; k < to_end; ++k) {
        std::uint64_t to = batch.positions[k];
        if (router) {
          const ChunkRouter::Destination d = router->route(to);
          to = core::bucket_first(n, p, d.bucket) + d.position;
        }
        std::memcpy(node_buffer + to * r_, batch.base + batch.offsets[k], r_);
      }
      if (router) {
        for (std::uint64_t k = first; k < end; ++k) router->routed(batch.positions[k]);
      }
      first = end;
    }
  }
}

bool FixedRecords::chunks_fit(const NodeFacts& node, std::uint64_t budget) const {
  return !node.tagged &&
         fixed_split(core::bucket_count(node.records, o_.run.constants), r_, o_.run.constants, budget).group_chunks > 0;
}

std::unique_ptr<ChunkGroups> FixedRecords::open_chunk_groups(const core::Node& node, const io::ByteExtents& data,
                                                             bool, std::uint64_t first_chunk, std::uint64_t end_chunk,
                                                             std::uint64_t, RunContext& ctx) const {
  return open_fixed_chunk_groups(
      node, data, first_chunk, end_chunk,
      fixed_split(core::bucket_count(node.records, o_.run.constants), r_, o_.run.constants, o_.run.memory_bytes), o_,
      ctx);
}

// In a group, a bucket holds its shuffled copy in the workspace: a leaf, or
// a node whose in-RAM plan also fits there. Routed buckets are placed first,
// so only their leaves run in groups.
bool FixedRecords::runs_in_group(const NodeFacts& bucket, std::uint64_t stored_bytes,
                                 std::uint64_t workspace_bytes) const {
  const std::uint64_t records_bytes = bucket.records * r_;
  if (stored_bytes > workspace_bytes || records_bytes > workspace_bytes) return false;
  if (core::is_leaf(bucket.records, o_.run.constants)) return true;
  return !bucket.tagged && records_bytes + MemoryPlan::workspace_bytes(bucket.records, o_.shuffle(),
                                                                       MemoryPlan::fastest_mode(o_.shuffle())) <=
                               workspace_bytes;
}

// Buckets [first, end) of `node`, loaded at `input`: routed buckets are put
// in plan order first (into the workspace, which then swaps with the
// input); runs of leaf buckets are shuffled in one batch, other buckets one
// by one in RAM; outputs go out in bucket order.
void FixedRecords::run_buckets_in_memory(const core::Node& node, std::uint64_t p, std::uint64_t first,
                                         std::uint64_t end, std::span<const std::uint64_t> bucket_bytes, bool tagged,
                                         std::byte* input, std::byte* workspace, RunContext& ctx) const {
  const std::uint64_t base = core::bucket_first(node.records, p, first);
  if (tagged) {
    const PositionTag tag = PositionTag::for_node(core::bucket_records(node.records, p, 0), false);
    const std::byte* frame = input;
    for (std::uint64_t j = first; j < end; ++j) {
      std::byte* placed = workspace + (core::bucket_first(node.records, p, j) - base) * r_;
      const std::uint64_t records = core::bucket_records(node.records, p, j);
      if (bucket_bytes[j - first] != records * (tag.width + r_)) io::throw_scratch_damaged();
      // Each tag in range, and every place once (their sum: one damaged
      // tag changes it), as RecordStream checks them.
      std::uint64_t sum = 0;
      for (std::uint64_t k = 0; k < records; ++k, frame += tag.width + r_) {
        const std::uint64_t at = tag.read(frame);
        if (at >= records) io::throw_scratch_damaged();
        sum += at;
        std::memcpy(placed + at * r_, frame + tag.width, r_);
      }
      if (sum != position_sum(records)) io::throw_scratch_damaged();
    }
    std::swap(input, workspace);
  }
  std::vector<device::ShuffleJob> leaves;
  std::uint64_t pending_from = 0, pending_bytes = 0;  // output bytes of the batched leaves
  auto emit = [&](const std::byte* data, std::size_t n) {
    ctx.output.write_fixed(data, n, r_);
    ctx.publish_progress();
  };
  auto flush_leaves = [&] {
    if (leaves.empty()) return;
    {
      PhaseTimer timer(ctx.stats.seconds_shuffling);
      device::shuffle_records(o_.run.device, leaves, r_, ctx.threads);
    }
    emit(workspace + pending_from, pending_bytes);
    leaves.clear();
    pending_bytes = 0;
  };
  for (std::uint64_t j = first; j < end; ++j) {
    const core::Node child = core::bucket_node(node, p, j);
    const std::uint64_t at = (core::bucket_first(node.records, p, j) - base) * r_;
    if (core::is_leaf(child.records, o_.run.constants)) {
      if (leaves.empty()) pending_from = at;
      leaves.push_back(
          {input + at, workspace + at, child.records,
           core::shuffle_bijection(o_.run.seed, {child.id, core::Purpose::kLeafShuffle, 0}, child.records)});
      pending_bytes += child.records * r_;
    } else {
      flush_leaves();
      PhaseTimerExcluding shuffling(ctx.stats.seconds_shuffling, ctx.stats.seconds_writing);
      MemorySource source(input + at, r_);
      MemoryPlan(o_.shuffle(), MemoryPlan::fastest_mode(o_.shuffle()), workspace + align_up(child.records * r_, 64),
                 emit)
          .run(child, source, workspace);
    }
  }
  flush_leaves();
}

}  // namespace extshuffle::ioperm
