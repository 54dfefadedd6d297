#include "text_records.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

#include "executor_support.hpp"
#include "extshuffle/errors.hpp"
#include "extshuffle/formats/terminator_scan.hpp"
#include "memory_executor.hpp"
#include "text_gather.hpp"
#include "tuning.hpp"

namespace extshuffle::driver {
namespace {

std::uint64_t staging_bytes(std::uint64_t budget) {
  return std::clamp<std::uint64_t>(align_down(budget / 16, 64), tuning::kMinStagingBytes, tuning::kMaxStagingBytes);
}

std::uint64_t gather_batch_records(std::uint64_t budget) {
  return std::clamp<std::uint64_t>(budget / tuning::kGatherBatchBudgetDivisor, tuning::kMinGatherBatchRecords,
                                   tuning::kMaxGatherBatchRecords);
}

// Shuffling G chunks at once: one identity array, and per chunk the
// permutation and the record offsets (4 bytes each).
std::uint64_t group_arrays_bytes(std::uint64_t leaf_records, std::uint64_t group) {
  return align_up(4 * leaf_records, 64) + align_up(group * 4 * (2 * leaf_records + 1), 64);
}


// Output of an in-RAM node: whole records staged and handed on together,
// one larger than the staging buffer handed on alone.
class StagedOutput {
 public:
  StagedOutput(RunContext& ctx, std::byte* staging, std::uint64_t capacity)
      : ctx_(ctx), staging_(staging), capacity_(capacity) {}
  void record(const std::byte* data, std::uint64_t bytes) {
    if (ctx_.output.done()) return;
    if (bytes > capacity_ - fill_) flush();
    if (bytes > capacity_) {
      ctx_.output.write(data, bytes, 1);
      ctx_.publish_progress();
      return;
    }
    std::memcpy(staging_ + fill_, data, bytes);
    fill_ += bytes;
    ++records_;
  }
  void flush() {
    if (fill_ > 0) {
      ctx_.output.write(staging_, fill_, records_);
      ctx_.publish_progress();
    }
    fill_ = records_ = 0;
  }

 private:
  RunContext& ctx_;
  std::byte* staging_;
  std::uint64_t capacity_;
  std::uint64_t fill_ = 0, records_ = 0;
};

}  // namespace

std::uint64_t TextRecords::minimum_memory_bytes(const core::PlanConstants& c) {
  const std::uint64_t half = std::max(2 * c.max_fanout * io::kScratchAlign,
                                      text_gather_arrays_bytes(c.leaf_records) + tuning::kMinChunkSpace +
                                          io::kScratchAlign);
  return std::max(kMinMemoryBytes, 2 * half);
}

void TextRecords::check_budget(std::uint64_t records, std::uint64_t bytes, std::uint64_t budget) const {
  if (fits_in_memory(records, bytes, budget)) return;
  const std::uint64_t minimum = minimum_memory_bytes(o_.constants);
  if (budget < minimum) {
    throw BudgetError("--memory must be at least " + std::to_string((minimum + 1023) >> 10) + "K for line records");
  }
}

// A node in RAM: its bytes, record offsets (8 bytes each), the index
// permutation's two buffers (4 bytes each), the batch offsets and staging.
std::uint64_t TextRecords::in_memory_bytes(std::uint64_t records, std::uint64_t bytes, std::uint64_t budget) const {
  return align_up(bytes, 64) + align_up(8 * (records + 1), 64) + 2 * align_up(4 * records, 64) +
         8 * gather_batch_records(budget) + staging_bytes(budget);
}

// 2.3, a node that fits: read it, find its records, shuffle their indices
// with the plan (memory_executor.hpp) and gather the records in that order.
void TextRecords::run_in_memory(const core::Node& node, const io::ByteExtents& data, bool root,
                                RunContext& ctx) const {
  std::byte* cursor = ctx.arena;
  std::byte* bytes = carve<std::byte>(cursor, data.bytes);
  {
    PhaseTimer timer(ctx.stats.seconds_reading);
    io::ExtentReader(data).read_now(bytes, data.bytes);
    ctx.stats.bytes_read += data.bytes;
  }
  run_loaded(node, bytes, data.bytes, root, cursor, ctx);
}

void TextRecords::run_buckets_in_memory(const core::Node& node, std::uint64_t p, std::uint64_t first,
                                        std::uint64_t end, std::span<const std::uint64_t> bucket_bytes,
                                        std::byte* input, std::byte* workspace, RunContext& ctx) const {
  const std::byte* at = input;
  for (std::uint64_t j = first; j < end && !ctx.output.done(); ++j) {
    run_loaded(core::bucket_node(node, p, j), at, bucket_bytes[j - first], false, workspace, ctx);
    at += bucket_bytes[j - first];
  }
}

void TextRecords::run_loaded(const core::Node& node, const std::byte* bytes, std::uint64_t size, bool root,
                             std::byte* workspace, RunContext& ctx) const {
  const TextScan s = scan(root);
  const std::uint64_t n = node.records;
  std::byte* cursor = workspace;
  auto* offsets = carve<std::uint64_t>(cursor, n + 1);
  auto* a = carve<std::uint32_t>(cursor, n);
  auto* b = carve<std::uint32_t>(cursor, n);
  const std::uint64_t batch_records = gather_batch_records(o_.memory_bytes);
  auto* batch_offsets = carve<std::uint64_t>(cursor, batch_records);
  std::byte* staging = cursor;

  PhaseTimerExcluding shuffling(ctx.stats.seconds_shuffling, ctx.stats.seconds_writing);
  const std::byte* at = bytes;
  const std::byte* end = bytes + size;
  if (s.plain_terminators()) {
    offsets[0] = 0;
    const auto* text = reinterpret_cast<const char*>(bytes);
    if (formats::find_record_ends(text, text + size, o_.syntax.terminator, n, offsets + 1) < n) {
      throw InputError(records_changed_message(n));
    }
    at = bytes + offsets[n];
  } else {
    for (std::uint64_t k = 0; k < n; ++k) {
      const std::byte* stop = s.next_record(at, end);
      if (!stop) throw InputError(records_changed_message(n));
      offsets[k] = static_cast<std::uint64_t>(at - bytes);
      at = stop;
    }
  }
  if (at != end && (!s.filter_blank || s.next_record(at, end))) throw InputError(records_changed_message(n));
  offsets[n] = size;
  for (std::uint32_t k = 0; k < n; ++k) a[k] = k;

  ShuffleOptions index_options = o_;
  index_options.record_size = sizeof(std::uint32_t);
  const std::uint64_t staging_capacity = staging_bytes(o_.memory_bytes);
  StagedOutput staged(ctx, staging, staging_capacity);
  const int threads = ctx.threads;
  auto length_of = [&](std::uint32_t e) { return s.record_length(bytes + offsets[e], offsets[e + 1] - offsets[e]); };
  // The gather is random access into the node's bytes, bound by memory
  // latency: batches of records are placed by a prefix sum of their
  // lengths and copied by all threads.
  run_node_in_memory(node, reinterpret_cast<std::byte*>(a), reinterpret_cast<std::byte*>(b), index_options,
                     [&](const std::byte* piece, std::size_t piece_bytes) {
                       const auto* indices = reinterpret_cast<const std::uint32_t*>(piece);
                       const std::uint64_t count = piece_bytes / sizeof(std::uint32_t);
                       for (std::uint64_t first = 0; first < count && !ctx.output.done();) {
                         std::uint64_t m = std::min({batch_records, count - first, ctx.output.records_left()});
                         const std::uint32_t* batch = indices + first;
#pragma omp parallel for schedule(static) num_threads(threads) if (m >= tuning::kParallelGatherMin)
                         for (std::uint64_t k = 0; k < m; ++k) batch_offsets[k] = length_of(batch[k]);
                         // The records that fit in the staging buffer go now, the rest next step.
                         std::uint64_t total = 0, fit = 0;
                         for (; fit < m && total + batch_offsets[fit] <= staging_capacity; ++fit) {
                           total += std::exchange(batch_offsets[fit], total);
                         }
                         if (fit == 0) {  // a record larger than the staging buffer
                           staged.record(bytes + offsets[batch[0]], length_of(batch[0]));
                           staged.flush();
                           ++first;
                           continue;
                         }
                         m = fit;
#pragma omp parallel for schedule(static) num_threads(threads) if (m >= tuning::kParallelGatherMin)
                         for (std::uint64_t k = 0; k < m; ++k) {
                           if (k + 8 < m) __builtin_prefetch(bytes + offsets[batch[k + 8]]);
                           const std::uint64_t stop = k + 1 < m ? batch_offsets[k + 1] : total;
                           std::memcpy(staging + batch_offsets[k], bytes + offsets[batch[k]], stop - batch_offsets[k]);
                         }
                         first += m;
                         ctx.output.write(staging, total, m);
                         ctx.publish_progress();
                       }
                     });
  staged.flush();
}

void TextRecords::gather_leaf(const core::Node& node, const io::ByteExtents& data, bool root, RunContext& ctx,
                              const OnWindow& on_window) const {
  const std::uint64_t arrays = text_gather_arrays_bytes(node.records);
  const std::uint64_t space_bytes = std::min(align_down(o_.memory_bytes - arrays, 64), tuning::kMaxChunkSpace);
  text_gather_in_windows(data, 0, node.records,
                         core::shuffle_bijection(o_.seed, {node.id, core::Purpose::kLeafShuffle, 0}, node.records),
                         scan(root), ctx.arena, ctx.arena + arrays, space_bytes, o_.memory_bytes, ctx, on_window);
}

// Bucket buffers take half of the budget (as for fixed-size records); the
// other half holds the index arrays and the chunk space, into which the
// node's bytes are read ahead while earlier chunks are shuffled and scattered.
TextSplit text_split(std::uint64_t p, const core::PlanConstants& c, std::uint64_t budget) {
  TextSplit s;
  s.split.bucket_buffer_bytes = bucket_buffer_bytes(budget / 2, p);
  const std::uint64_t left = budget - 2 * p * s.split.bucket_buffer_bytes;
  const std::uint64_t per_chunk = 8 * c.leaf_records + 4;
  s.group_chunks = std::clamp<std::uint64_t>(left / 4 / per_chunk, 1, tuning::kMaxChunkGroup);
  s.arrays_bytes = std::max(group_arrays_bytes(c.leaf_records, s.group_chunks), text_gather_arrays_bytes(c.leaf_records));
  if (left < s.arrays_bytes + tuning::kMinChunkSpace) throw BudgetError("--memory too small for line records");
  s.space_bytes = std::min(align_down(left - s.arrays_bytes, 64), tuning::kMaxChunkSpace);
  s.split.chunk_memory_bytes = align_up(s.space_bytes, 64) + align_up(s.arrays_bytes, 64);
  return s;
}

std::uint64_t TextRecords::bucket_region_bytes(std::uint64_t node_bytes, std::uint64_t n,
                                               std::uint64_t bucket_records) const {
  const auto expected = static_cast<std::uint64_t>(static_cast<unsigned __int128>(node_bytes) * bucket_records / n);
  return align_up(expected + expected / tuning::kRegionSlackDivisor + tuning::kRegionSlackBytes, io::kScratchAlign);
}

std::unique_ptr<ChunkGroups> TextRecords::open_chunk_groups(const core::Node& node, const io::ByteExtents& data,
                                                            bool root, std::uint64_t, std::uint64_t end_chunk,
                                                            std::uint64_t, RunContext& ctx) const {
  return open_text_chunk_groups(node, data, end_chunk, scan(root),
                                text_split(core::bucket_count(node.records, o_.constants), o_.constants, o_.memory_bytes),
                                o_, ctx);
}

}  // namespace extshuffle::driver
