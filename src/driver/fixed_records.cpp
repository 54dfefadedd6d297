#include "fixed_records.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#include "executor_support.hpp"
#include "extshuffle/core/recursive_matrix.hpp"
#include "extshuffle/errors.hpp"
#include "memory_executor.hpp"
#include "tuning.hpp"

namespace extshuffle::driver {
namespace {

std::uint64_t half_budget(std::uint64_t budget) { return budget / 2 / 64 * 64; }  // as fits_in_memory

// Records so large that a chunk does not fit in memory are gathered by index
// (DESIGN.md 2.3): the chunk's permutation and its inverse (8 bytes a
// record), a read buffer that streams through the chunk, and an output window
// that receives the records whose shuffled positions it covers; one
// sequential pass over the chunk per window.
struct GatherLayout {
  std::uint64_t index_bytes = 0;
  std::uint64_t read_bytes = 0;
  std::uint64_t window_bytes = 0;
  std::uint64_t total() const { return index_bytes + read_bytes + window_bytes; }
};

GatherLayout gather_layout(std::uint64_t records, std::size_t record_size, std::uint64_t budget) {
  GatherLayout g;
  g.index_bytes = 2 * align_up(records * sizeof(std::uint32_t), 64);  // as carved below
  const std::uint64_t left = budget > g.index_bytes ? budget - g.index_bytes : 0;
  g.read_bytes = std::max<std::uint64_t>(1, std::min<std::uint64_t>(left / 8 / record_size,
                                                                     tuning::kMiB / record_size + 1)) *
                 record_size;
  g.window_bytes = align_down(left > g.read_bytes ? left - g.read_bytes : 0, record_size);
  if (g.window_bytes < record_size) throw BudgetError("--memory too small for the record size");
  return g;
}

// How a streaming node uses the budget. Bucket write buffers (two per bucket)
// take up to half; chunks take the rest: groups of whole chunks (read
// double-buffered, plus the shuffled copy) when three chunks fit, otherwise
// the windowed gather, with a quarter for the buckets.
struct FixedSplit {
  SplitLayout split;
  std::uint64_t group_chunks = 1;
  GatherLayout gather;
};

FixedSplit fixed_split(std::uint64_t p, std::size_t r, const core::PlanConstants& c, std::uint64_t budget) {
  FixedSplit f;
  const std::uint64_t chunk_bytes = c.leaf_records * r;
  f.split.bucket_buffer_bytes = bucket_buffer_bytes(budget / 2, p);
  const std::uint64_t chunk_budget = budget - 2 * p * f.split.bucket_buffer_bytes;
  if (3 * chunk_bytes <= chunk_budget) {
    f.group_chunks = std::min(tuning::kMaxChunkGroup, chunk_budget / (3 * chunk_bytes));
    f.split.chunk_memory_bytes = 3 * f.group_chunks * chunk_bytes;
    return f;
  }
  f.split.chunks_gathered = true;
  f.split.bucket_buffer_bytes = bucket_buffer_bytes(budget / 4, p);
  f.gather = gather_layout(c.leaf_records, r, budget - 2 * p * f.split.bucket_buffer_bytes);
  f.split.chunk_memory_bytes = f.gather.total();
  return f;
}

// The m records at `start` of `data` in the order of the bijective shuffle
// `f`, window by window, in `memory` as laid out by `g`: the inverse
// permutation says where each record read goes, and each pass over the
// records fills one window of consecutive output positions.
void gather_in_windows(const core::VariablePhilox& f, std::uint64_t m, const io::ByteExtents& data,
                       std::uint64_t start, const GatherLayout& g, std::byte* memory, std::size_t r,
                       RunContext& ctx, const OnWindow& on_window) {
  std::byte* cursor = memory;
  auto* permutation = carve<std::uint32_t>(cursor, m);
  auto* inverse = carve<std::uint32_t>(cursor, m);
  std::byte* read_buffer = cursor;
  std::byte* window = read_buffer + g.read_bytes;
  {
    PhaseTimer timer(ctx.stats.seconds_shuffling);
    for (std::uint32_t k = 0; k < m; ++k) inverse[k] = k;
    const device::ShuffleJob job{reinterpret_cast<const std::byte*>(inverse),
                                 reinterpret_cast<std::byte*>(permutation), m, f};
    device::shuffle_records(device::Device::kCpu, job, sizeof(std::uint32_t), ctx.threads);
    for (std::uint32_t k = 0; k < m; ++k) inverse[permutation[k]] = k;
  }
  const std::uint64_t window_records = g.window_bytes / r;
  const std::uint64_t read_records = g.read_bytes / r;
  io::ExtentReader reader(data);
  for (std::uint64_t first = 0; first < m; first += window_records) {
    const std::uint64_t end = std::min(m, first + window_records);
    for (std::uint64_t s0 = 0; s0 < m; s0 += read_records) {
      const std::uint64_t count = std::min(read_records, m - s0);
      {
        PhaseTimer timer(ctx.stats.seconds_reading);
        reader.seek(start + s0 * r);
        reader.read_now(read_buffer, count * r);
        ctx.stats.bytes_read += count * r;
      }
      for (std::uint64_t e = 0; e < count; ++e) {
        const std::uint64_t k = inverse[s0 + e];
        if (k >= first && k < end) std::memcpy(window + (k - first) * r, read_buffer + e * r, r);
      }
    }
    on_window(Window{window, first, end, nullptr, r});
  }
}

// Steps 1-2 for chunks that fit: groups of G chunks, the next group read
// while this one is shuffled and scattered.
class FixedChunkGroups final : public ChunkGroups {
 public:
  FixedChunkGroups(const core::Node& node, const io::ByteExtents& data, std::uint64_t first_chunk,
                   std::uint64_t end_chunk, const FixedSplit& layout, const ExternalOptions& o, RunContext& ctx)
      : node_(node), data_(data), first_chunk_(first_chunk), end_chunk_(end_chunk), layout_(layout), o_(o), ctx_(ctx),
        r_(o.record_size), reader_(data) {
    const std::uint64_t group_bytes = layout.group_chunks * o.constants.leaf_records * r_;
    for (int b = 0; b < 3; ++b) buffers_[b] = ctx.arena + b * group_bytes;
    if (!layout.split.chunks_gathered) start_read(0);
  }

  std::uint64_t next(std::uint64_t i) override {
    if (layout_.split.chunks_gathered) return 0;
    {
      PhaseTimer timer(ctx_.stats.seconds_reading);
      reader_.finish();
    }
    const std::uint64_t g = (i - first_chunk_) / layout_.group_chunks;
    input_ = buffers_[g % 2];
    start_read(g + 1);
    return std::min(layout_.group_chunks, end_chunk_ - i);
  }

  void shuffle(std::uint64_t i, std::uint64_t count) override {
    const core::PlanConstants& c = o_.constants;
    jobs_.clear();
    for (std::uint64_t k = 0; k < count; ++k) {
      const std::uint64_t at = k * c.leaf_records * r_;
      const std::uint64_t m = core::chunk_records(node_.records, i + k, c);
      jobs_.push_back({input_ + at, buffers_[2] + at, m,
                       core::shuffle_bijection(o_.seed, {node_.id, core::Purpose::kChunkShuffle, i + k}, m)});
    }
    device::shuffle_records(o_.device, jobs_, r_, ctx_.threads);
  }

  void append_slice(std::uint64_t g, std::uint64_t k0, std::uint64_t k1, io::ByteSink& bucket) const override {
    bucket.append(buffers_[2] + (g * o_.constants.leaf_records + k0) * r_, (k1 - k0) * r_);
  }

  void gather_chunk(std::uint64_t i, std::uint64_t m, const core::VariablePhilox& f,
                    const OnWindow& on_window) override {
    gather_in_windows(f, m, data_, byte_offset(i), layout_.gather, ctx_.arena, r_, ctx_,
                      on_window);
  }

  void finish() override {}

 private:
  // Where chunk i starts in data_ (which starts with chunk first_chunk_).
  std::uint64_t byte_offset(std::uint64_t i) const {
    return (core::chunk_first(i, o_.constants) - core::chunk_first(first_chunk_, o_.constants)) * r_;
  }

  // Group g's bytes into its read buffer (one read in flight at a time).
  void start_read(std::uint64_t g) {
    const std::uint64_t first = first_chunk_ + g * layout_.group_chunks;
    if (first >= end_chunk_) return;
    const std::uint64_t last = std::min(end_chunk_, first + layout_.group_chunks);
    const std::uint64_t bytes = core::chunk_range_records(node_.records, first, last, o_.constants) * r_;
    reader_.seek(byte_offset(first));
    reader_.start(buffers_[g % 2], bytes);
    ctx_.stats.bytes_read += bytes;
  }

  core::Node node_;
  const io::ByteExtents& data_;
  std::uint64_t first_chunk_, end_chunk_;
  FixedSplit layout_;
  const ExternalOptions& o_;
  RunContext& ctx_;
  std::size_t r_;
  io::ExtentReader reader_;
  std::byte* buffers_[3] = {};  // two read buffers and the shuffled group
  const std::byte* input_ = nullptr;
  std::vector<device::ShuffleJob> jobs_;
};

}  // namespace

std::uint64_t FixedRecords::minimum_memory_bytes(const core::PlanConstants& constants, std::size_t record_size) {
  return std::max(kMinMemoryBytes, (32 * constants.leaf_records + 8 * record_size + 256) / 3 + 4096);
}

void FixedRecords::check_budget(std::uint64_t, std::uint64_t, std::uint64_t budget) const {
  const std::uint64_t minimum = minimum_memory_bytes(o_.constants, r_);
  if (budget < minimum) {
    throw BudgetError("--memory must be at least " + std::to_string((minimum + 1023) >> 10) + "K for records of " +
                      std::to_string(r_) + " bytes");
  }
}

std::uint64_t FixedRecords::in_memory_bytes(std::uint64_t, std::uint64_t bytes, std::uint64_t) const {
  // Two buffers of the node's bytes (memory_executor.hpp).
  return std::max<std::uint64_t>(2 * align_up(bytes, 64), 128);
}

void FixedRecords::run_in_memory(const core::Node& node, const io::ByteExtents& data, bool, RunContext& ctx) const {
  const std::uint64_t bytes = node.records * r_;
  std::byte* a = ctx.arena;
  std::byte* b = ctx.arena + half_budget(o_.memory_bytes);
  // The first chunks are shuffled while the rest is still being read.
  io::ExtentReader reader(data);
  reader.start(a, bytes);
  ctx.stats.bytes_read += bytes;
  double reading = 0;
  {
    PhaseTimerExcluding shuffling(ctx.stats.seconds_shuffling, ctx.stats.seconds_writing);
    run_node_in_memory(
        node, a, b, o_,
        [&](const std::byte* data_out, std::size_t n) {
          ctx.output.write_fixed(data_out, n, r_);
          ctx.publish_progress();
        },
        [&](std::uint64_t records) {
          PhaseTimer timer(reading);
          reader.wait_for(records * r_);
        });
    PhaseTimer timer(reading);
    reader.finish();
  }
  ctx.stats.seconds_reading += reading;
  ctx.stats.seconds_shuffling -= reading;
}

void FixedRecords::gather_leaf(const core::Node& node, const io::ByteExtents& data, bool, RunContext& ctx,
                               const OnWindow& on_window) const {
  const GatherLayout g = gather_layout(node.records, r_, o_.memory_bytes);
  gather_in_windows(core::shuffle_bijection(o_.seed, {node.id, core::Purpose::kLeafShuffle, 0}, node.records),
                    node.records, data, 0, g, ctx.arena, r_, ctx, on_window);
}

SplitLayout FixedRecords::split_layout(std::uint64_t p, std::uint64_t budget) const {
  return fixed_split(p, r_, o_.constants, budget).split;
}

std::unique_ptr<ChunkGroups> FixedRecords::open_chunk_groups(const core::Node& node, const io::ByteExtents& data,
                                                             bool, std::uint64_t first_chunk, std::uint64_t end_chunk,
                                                             std::uint64_t, RunContext& ctx) const {
  return std::make_unique<FixedChunkGroups>(node, data, first_chunk, end_chunk, fixed_split(core::bucket_count(node.records, o_.constants), r_,
                                                                    o_.constants, o_.memory_bytes),
                                            o_, ctx);
}

// Buckets [first, end) of `node`, loaded at `input`: runs of leaf buckets
// are shuffled in one batch, other buckets one by one in RAM; outputs go out
// in bucket order.
void FixedRecords::run_buckets_in_memory(const core::Node& node, std::uint64_t p, std::uint64_t first,
                                         std::uint64_t end, std::span<const std::uint64_t>, std::byte* input,
                                         std::byte* output, RunContext& ctx) const {
  const std::uint64_t base = core::bucket_first(node.records, p, first);
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
      device::shuffle_records(o_.device, leaves, r_, ctx.threads);
    }
    emit(output + pending_from, pending_bytes);
    leaves.clear();
    pending_bytes = 0;
  };
  for (std::uint64_t j = first; j < end; ++j) {
    const core::Node child = core::bucket_node(node, p, j);
    const std::uint64_t at = (core::bucket_first(node.records, p, j) - base) * r_;
    if (core::is_leaf(child.records, o_.constants)) {
      if (leaves.empty()) pending_from = at;
      leaves.push_back({input + at, output + at, child.records,
                        core::shuffle_bijection(o_.seed, {child.id, core::Purpose::kLeafShuffle, 0}, child.records)});
      pending_bytes += child.records * r_;
    } else {
      flush_leaves();
      PhaseTimerExcluding shuffling(ctx.stats.seconds_shuffling, ctx.stats.seconds_writing);
      run_node_in_memory(child, input + at, output + at, o_, emit);
    }
  }
  flush_leaves();
}

}  // namespace extshuffle::driver
