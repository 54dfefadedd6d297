#include "leaf_windows.hpp"

#include <algorithm>
#include <cstring>
#include <optional>
#include <vector>

#include "walk_support.hpp"
#include "extshuffle/device/permutation_indices.hpp"
#include "extshuffle/errors.hpp"
#include "route_batch.hpp"
#include "tuning.hpp"

namespace extshuffle::ioperm {
namespace {

// Arena carving of the two phases. Routing: the stream that reads the leaf
// (or an oversized window), the batch arrays, then the windows' write
// buffers. Emitting a window: fixed-size records are placed in a buffer of
// the window's records while a small stream reads it; text is read whole,
// then handed on through the position index and a staging buffer.
// Text windows hand their records on through staging of a 16th of the
// budget, at most kIndexStagingBytes (a longer record goes on alone).
std::uint64_t text_staging_bytes(std::uint64_t budget) {
  return std::clamp<std::uint64_t>(align_down(budget / 16, 64), 64, tuning::kIndexStagingBytes);
}
std::uint64_t text_index_bytes(std::uint64_t records, std::uint64_t budget) {
  return align_up(12 * records, 64) + text_staging_bytes(budget);
}

// The stream that reads a window of fixed-size records back.
std::uint64_t emit_stream_space(std::uint64_t budget, const RecordLayout& layout) {
  return std::max(minimum_stream_space(layout, 0), std::min(budget / 16, tuning::kMaxStreamSpace / 4) / 64 * 64);
}
// Its batches: a record per 256 bytes of space, at most 4096 (64 KiB of
// arrays), so that the per-batch work stays small against the copies.
std::uint64_t emit_batch(std::uint64_t budget, const RecordLayout& layout) {
  return std::clamp<std::uint64_t>(emit_stream_space(budget, layout) / 256, tuning::kMinRouteBatch, 4096);
}
std::uint64_t emit_stream_bytes(std::uint64_t budget, const RecordLayout& layout) {
  return emit_stream_space(budget, layout) + RecordStream::arrays_bytes(emit_batch(budget, layout)) + 128;
}

// Does a window of `count` records stored in `stored` bytes fit in memory?
bool window_fits(const RecordLayout& layout, std::uint64_t count, std::uint64_t stored, std::uint64_t budget) {
  if (!layout.framed()) return count * layout.options().record_size + emit_stream_bytes(budget, layout) <= budget;
  return align_up(stored, 64) + text_index_bytes(count, budget) <= budget;
}

// How `count` output positions are cut into windows with `memory_bytes`
// for the windows' write buffers and the stream: `wanted` positions a
// window, unless that makes more windows than buffers of at least
// kMinBucketBufferBytes allow; then fewer, larger windows, each cut again
// when it turns out larger than memory.
struct WindowCut {
  std::uint64_t per_window = 1, windows = 1, stream_share = 0;
};
WindowCut cut_windows(std::uint64_t count, std::uint64_t wanted, std::uint64_t memory_bytes) {
  WindowCut cut;
  cut.stream_share = std::min(tuning::kMaxStreamSpace + tuning::kMaxStreamSpace / 64, memory_bytes / 2);
  const std::uint64_t max_windows =
      std::max<std::uint64_t>(2, (memory_bytes - cut.stream_share) / (2 * tuning::kMinBucketBufferBytes));
  cut.per_window = std::max<std::uint64_t>(1, wanted);
  cut.windows = (count + cut.per_window - 1) / cut.per_window;
  if (cut.windows > max_windows) {
    cut.per_window = (count + max_windows - 1) / max_windows;
    cut.windows = (count + cut.per_window - 1) / cut.per_window;
  }
  return cut;
}

class LeafWindows {
 public:
  LeafWindows(const RecordLayout& layout, std::uint64_t longest_record_bytes, io::BucketStore& store, RunContext& ctx)
      : layout_(layout), o_(layout.options()), store_(store), ctx_(ctx), budget_(o_.run.memory_bytes),
        stream_floor_(minimum_stream_space(layout, longest_record_bytes)) {}

  // Routes `count` records of `data` into windows of `per_window` output
  // positions, position q = map(position), then emits each window in turn.
  // Returns the passes through disk of the windows (emit()).
  template <class Map>
  std::uint32_t route_and_emit(const io::ByteExtents& data, const RecordFraming& framing, std::optional<PositionTag> tag,
                      std::uint64_t count, std::uint64_t record_bytes, std::uint64_t first_output,
                      std::uint64_t per_window, std::byte* memory, std::uint64_t memory_bytes, Map&& map) {
    const WindowCut cut = cut_windows(count, per_window, memory_bytes);
    per_window = cut.per_window;
    const std::uint64_t windows = cut.windows, stream_share = cut.stream_share;
    const PositionTag window_tag = PositionTag::for_node(per_window, layout_.framed());
    const std::uint64_t buffer_bytes = bucket_buffer_bytes(memory_bytes - stream_share, windows);
    std::byte* cursor = memory + 2 * windows * buffer_bytes;
    const std::uint64_t max_batch = std::clamp<std::uint64_t>(stream_share / 256, tuning::kMinRouteBatch, tuning::kMaxRouteBatch);
    std::byte* arrays = cursor;
    cursor += RecordStream::arrays_bytes(max_batch);
    RouteArrays route = RouteArrays::carve_from(cursor, max_batch, windows);
    const std::uint64_t used = static_cast<std::uint64_t>(cursor - memory);
    if (used + stream_floor_ > memory_bytes) throw BudgetError("--memory too small for a leaf larger than memory");
    const std::uint64_t space_bytes = align_down(std::min(memory_bytes - used, tuning::kMaxStreamSpace), 64);

    std::vector<std::uint64_t> regions(windows), counts(windows);
    std::unique_ptr<bool[]> kept(new bool[windows]);
    for (std::uint64_t w = 0; w < windows; ++w) {
      counts[w] = std::min(per_window, count - w * per_window);
      regions[w] = layout_.bucket_region_bytes(record_bytes, count, counts[w], window_tag.width);
      kept[w] = ctx_.output.wanted(first_output + w * per_window);
    }
    io::BucketStore::Split split(store_, regions, std::span<const bool>(kept.get(), windows),
                                 layout_.buckets_may_overflow(), memory, buffer_bytes);
    {
      RecordStream stream(data, framing, tag, count, 0, cursor, space_bytes, arrays, max_batch, budget_, ctx_);
      RecordBatch batch;
      while (stream.next(batch)) {
        PhaseTimer timer(ctx_.stats.seconds_scattering);
        route_batch(batch, 0, batch.count, windows, window_tag, route, ctx_.threads,
                    [&](std::uint64_t position, std::uint64_t& window, std::uint64_t& there) {
                      const std::uint64_t q = map(position);
                      window = q / per_window;
                      there = q - window * per_window;
                    },
                    [&](std::uint64_t w) -> io::ByteSink& { return split.writer(w); });
        ctx_.stats.bytes_written += split.take_written_bytes();
        ctx_.publish_progress();
      }
    }
    {
      PhaseTimer timer(ctx_.stats.seconds_writing);
      ctx_.stats.bytes_written += split.finish();
    }
    std::uint32_t passes = 1;
    for (std::uint64_t w = 0; w < windows && ctx_.output.wanted(first_output + w * per_window); ++w) {
      passes = std::max(passes, emit(split.bucket(w), counts[w], window_tag, first_output + w * per_window));
      split.discard(w);
    }
    return passes;
  }

  // A window of `count` output positions, each record behind its tag.
  // Returns the passes through disk it takes: 1, or more when it is larger
  // than memory after all and is cut again.
  std::uint32_t emit(const io::ByteExtents& window, std::uint64_t count, const PositionTag& tag,
                     std::uint64_t first_output) {
    const std::uint64_t stored = window.bytes;
    const std::uint64_t record_bytes = stored - count * tag.width;
    if (!window_fits(layout_, count, stored, budget_)) {
      if (count == 1) throw_record_too_large(record_bytes, budget_);
      // Larger than memory after all: cut it again by position.
      const std::uint64_t average = std::max<std::uint64_t>(1, record_bytes / std::max<std::uint64_t>(count, 1));
      const std::uint64_t per_window = std::max<std::uint64_t>(1, text_capacity() / 2 / average);
      return 1 + route_and_emit(window, layout_.framing(false), tag, count, record_bytes, first_output,
                                std::min(per_window, (count + 1) / 2), ctx_.arena, budget_,
                                [](std::uint64_t position) { return position; });
    }
    if (layout_.framed()) {
      emit_text(window, count, tag);
    } else {
      emit_fixed(window, count, tag);
    }
    return 1;
  }

 private:
  std::uint64_t text_capacity() const { return budget_ - text_index_bytes(1, budget_); }

  void emit_fixed(const io::ByteExtents& window, std::uint64_t count, const PositionTag& tag) {
    const std::size_t r = o_.record_size;
    std::byte* placed = ctx_.arena;
    std::byte* cursor = placed + align_up(count * r, 64);
    std::byte* arrays = cursor;
    const std::uint64_t batch_records = emit_batch(budget_, layout_);
    cursor += RecordStream::arrays_bytes(batch_records);
    const std::uint64_t space = emit_stream_space(budget_, layout_);
    const RecordFraming framing = layout_.framing(false);
    RecordStream stream(window, framing, tag, count, 0, cursor, space, arrays, batch_records, budget_, ctx_);
    RecordBatch batch;
    while (stream.next(batch)) {
      for (std::uint64_t k = 0; k < batch.count; ++k) {
        std::memcpy(placed + batch.positions[k] * r, batch.base + batch.offsets[k], r);
      }
    }
    ctx_.output.write_fixed(placed, count * r, r);
    ctx_.publish_progress();
  }

  void emit_text(const io::ByteExtents& window, std::uint64_t count, const PositionTag& tag) {
    std::byte* bytes = ctx_.arena;
    std::byte* cursor = bytes + align_up(window.bytes, 64);
    auto* offsets = carve<std::uint64_t>(cursor, count);
    auto* lengths = carve<std::uint32_t>(cursor, count);
    std::byte* staging = cursor;
    {
      PhaseTimer timer(ctx_.stats.seconds_reading);
      io::ExtentReader(window).read_now(bytes, window.bytes);
      ctx_.stats.bytes_read += window.bytes;
    }
    locate_tagged_records(bytes, window.bytes, count, tag, layout_.framing(false).scan, offsets, lengths);
    // Whole records staged and handed on together; one larger than the
    // staging buffer goes on alone.
    const std::uint64_t staging_bytes = text_staging_bytes(budget_);
    std::uint64_t fill = 0, staged = 0;
    auto flush = [&] {
      if (fill > 0) ctx_.output.write(staging, fill, staged);
      fill = staged = 0;
    };
    for (std::uint64_t t = 0; t < count && staged < ctx_.output.records_left(); ++t) {
      if (fill + lengths[t] > staging_bytes) flush();
      if (lengths[t] > staging_bytes) {
        ctx_.output.write(bytes + offsets[t], lengths[t], 1);
        continue;
      }
      std::memcpy(staging + fill, bytes + offsets[t], lengths[t]);
      fill += lengths[t];
      ++staged;
    }
    flush();
    ctx_.publish_progress();
  }

  const RecordLayout& layout_;
  const WalkOptions& o_;
  io::BucketStore& store_;
  RunContext& ctx_;
  std::uint64_t budget_;
  std::uint64_t stream_floor_;  // the smallest stream space: the longest record fits
};

}  // namespace

std::uint64_t leaf_window_records(const RecordLayout& layout, std::uint64_t records, std::uint64_t record_bytes,
                                  std::uint64_t budget) {
  if (!layout.framed()) {
    const std::size_t r = layout.options().record_size;
    const std::uint64_t room = budget - std::min(budget, emit_stream_bytes(budget, layout));
    return std::clamp<std::uint64_t>(room / r, 1, std::max<std::uint64_t>(records, 1));
  }
  const std::uint64_t average = std::max<std::uint64_t>(1, record_bytes / std::max<std::uint64_t>(records, 1));
  const std::uint64_t room = budget - std::min(budget, text_index_bytes(1, budget));
  return std::clamp<std::uint64_t>(room / 2 / (average + 16), 1, std::max<std::uint64_t>(records, 1));
}

bool leaf_in_one_pass(const RecordLayout& layout, std::uint64_t records, std::uint64_t record_bytes,
                      std::uint64_t budget) {
  const std::uint64_t inverse_bytes = align_up(4 * records, 64);
  if (inverse_bytes >= budget) return false;
  const std::uint64_t wanted = leaf_window_records(layout, records, record_bytes, budget);
  return cut_windows(records, wanted, budget - inverse_bytes).per_window == std::max<std::uint64_t>(1, wanted);
}

std::uint32_t emit_window(const RecordLayout& layout, const io::ByteExtents& window, std::uint64_t count,
                          const PositionTag& tag, std::uint64_t first_output, std::uint64_t longest_record_bytes,
                          io::BucketStore& store, RunContext& ctx) {
  return LeafWindows(layout, longest_record_bytes, store, ctx).emit(window, count, tag, first_output);
}

std::uint32_t run_leaf_in_windows(const RecordLayout& layout, const core::Node& leaf, const io::ByteExtents& data,
                                  const NodeFacts& facts, bool root, io::BucketStore& store, RunContext& ctx) {
  const std::uint64_t m = leaf.records;
  const std::uint64_t budget = layout.options().run.memory_bytes;
  // 1. Where each record goes: the leaf's shuffle as an inverse permutation.
  auto* inverse = reinterpret_cast<std::uint32_t*>(ctx.arena);
  {
    PhaseTimer timer(ctx.stats.seconds_shuffling);
    device::shuffle_inverse(
        core::shuffle_bijection(layout.options().run.seed, {leaf.id, core::Purpose::kLeafShuffle, 0}, m), m, inverse,
        ctx.threads);
  }
  const std::uint64_t inverse_bytes = align_up(4 * m, 64);
  if (inverse_bytes + 2 * minimum_stream_space(layout, facts.max_record_bytes) > budget) {
    throw BudgetError("--memory too small for a leaf larger than memory");
  }
  std::optional<PositionTag> tag;
  if (facts.tagged) tag = PositionTag::for_node(m, layout.framed());
  // 2. Route the records to windows by output position; 3. emit each window.
  LeafWindows windows(layout, facts.max_record_bytes, store, ctx);
  return 1 + windows.route_and_emit(data, layout.framing(root), tag, m, facts.record_bytes, leaf.id.first,
                                    leaf_window_records(layout, m, facts.record_bytes, budget),
                                    ctx.arena + inverse_bytes, budget - inverse_bytes,
                                    [inverse](std::uint64_t position) { return inverse[position]; });
}

}  // namespace extshuffle::ioperm
