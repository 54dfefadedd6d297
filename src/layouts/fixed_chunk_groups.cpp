// Steps 1-2 of a split with fixed-size records whose chunks fit in memory:
// groups of whole chunks read by offset, double-buffered, and shuffled as
// records into a third buffer whose slices step 3 appends to the buckets;
// or, when three chunks do not fit, one chunk at a time whose shuffle is an
// index permutation that step 3 gathers the records through.
#include <algorithm>
#include <cstring>
#include <vector>

#include "ioperm/walk_support.hpp"
#include "extshuffle/device/permutation_indices.hpp"
#include "extshuffle/core/recursive_matrix.hpp"
#include "fixed_records.hpp"
#include "ioperm/tuning.hpp"

namespace extshuffle::ioperm {
namespace {

class FixedChunkGroups final : public ChunkGroups {
 public:
  FixedChunkGroups(const core::Node& node, const io::ByteExtents& data, std::uint64_t first_chunk,
                   std::uint64_t end_chunk, const FixedSplit& layout, const WalkOptions& o, RunContext& ctx)
      : node_(node), first_chunk_(first_chunk), end_chunk_(end_chunk), layout_(layout), o_(o), ctx_(ctx),
        r_(o.record_size), reader_(data) {
    const std::uint64_t group_bytes = align_up(layout.group_chunks * o.run.constants.leaf_records * r_, 64);
    for (int b = 0; b < 3; ++b) buffers_[b] = ctx.arena + b * group_bytes;
    // Indexed: the read buffer(s), then the permutation.
    permutation_ = reinterpret_cast<std::uint32_t*>(ctx.arena + (layout.read_ahead ? 2 : 1) * group_bytes);
    if (layout_.read_ahead) start_read(0);
  }

  std::uint64_t next(std::uint64_t i) override {
    const std::uint64_t g = (i - first_chunk_) / layout_.group_chunks;
    if (!layout_.read_ahead) start_read(g);  // one buffer: read now
    {
      PhaseTimer timer(ctx_.stats.seconds_reading);
      reader_.finish();
    }
    input_ = buffers_[layout_.read_ahead ? g % 2 : 0];
    if (layout_.read_ahead) start_read(g + 1);
    const std::uint64_t count = std::min(layout_.group_chunks, end_chunk_ - i);
    const core::PlanConstants& c = o_.run.constants;
    consumed_ = core::chunk_range_records(node_.records, first_chunk_, i + count, c) * r_;
    return count;
  }

  std::uint64_t consumed_bytes() const override { return consumed_; }

  void shuffle(std::uint64_t i, std::uint64_t count) override {
    const core::PlanConstants& c = o_.run.constants;
    if (layout_.indexed) {
      const std::uint64_t m = core::chunk_records(node_.records, i, c);
      device::shuffle_permutation(core::shuffle_bijection(o_.run.seed, {node_.id, core::Purpose::kChunkShuffle, i}, m),
                                  m, permutation_, ctx_.threads);
      return;
    }
    jobs_.clear();
    for (std::uint64_t k = 0; k < count; ++k) {
      const std::uint64_t at = k * c.leaf_records * r_;
      const std::uint64_t m = core::chunk_records(node_.records, i + k, c);
      jobs_.push_back({input_ + at, buffers_[2] + at, m,
                       core::shuffle_bijection(o_.run.seed, {node_.id, core::Purpose::kChunkShuffle, i + k}, m)});
    }
    device::shuffle_records(o_.run.device, jobs_, r_, ctx_.threads);
  }

  void append_slice(std::uint64_t g, std::uint64_t k0, std::uint64_t k1, io::ByteSink& bucket) const override {
    if (!layout_.indexed) {
      bucket.append(buffers_[2] + (g * o_.run.constants.leaf_records + k0) * r_, (k1 - k0) * r_);
      return;
    }
    // Gathered through the permutation, a few KiB at a time.
    alignas(64) std::byte staged[4096];
    const std::uint64_t per_stage = std::max<std::uint64_t>(1, sizeof staged / r_);
    for (std::uint64_t k = k0; k < k1;) {
      if (r_ > sizeof staged) {
        bucket.append(input_ + std::uint64_t{permutation_[k++]} * r_, r_);
        continue;
      }
      const std::uint64_t end = std::min(k1, k + per_stage);
      device::gather_by_permutation(input_, permutation_ + k, end - k, r_, staged);
      bucket.append(staged, (end - k) * r_);
      k = end;
    }
  }

  void finish() override {}

 private:
  // Group g's bytes into its read buffer (one read in flight at a time).
  void start_read(std::uint64_t g) {
    const std::uint64_t first = first_chunk_ + g * layout_.group_chunks;
    if (first >= end_chunk_) return;
    const std::uint64_t last = std::min(end_chunk_, first + layout_.group_chunks);
    const std::uint64_t bytes = core::chunk_range_records(node_.records, first, last, o_.run.constants) * r_;
    // data starts with chunk first_chunk_.
    reader_.seek((core::chunk_first(first, o_.run.constants) - core::chunk_first(first_chunk_, o_.run.constants)) * r_);
    reader_.start(buffers_[layout_.read_ahead ? g % 2 : 0], bytes);
    ctx_.stats.bytes_read += bytes;
  }

  core::Node node_;
  std::uint64_t first_chunk_, end_chunk_;
  FixedSplit layout_;
  const WalkOptions& o_;
  RunContext& ctx_;
  std::size_t r_;
  io::ExtentReader reader_;
  std::byte* buffers_[3] = {};  // two read buffers and the shuffled group
  const std::byte* input_ = nullptr;
  std::uint32_t* permutation_ = nullptr;
  std::uint64_t consumed_ = 0;
  std::vector<device::ShuffleJob> jobs_;
};

}  // namespace

// Bucket write buffers (two per bucket) take up to half of the budget;
// groups of whole chunks take the rest when three chunks fit (read
// double-buffered, plus the shuffled copy); otherwise one chunk (two when
// they fit, to read ahead) and its index permutation; otherwise none.
FixedSplit fixed_split(std::uint64_t p, std::size_t r, const core::PlanConstants& c, std::uint64_t budget) {
  FixedSplit f;
  if (budget / 2 < 2 * p * 64) return f;  // not even 64-byte bucket buffers
  const std::uint64_t chunk_bytes = align_up(c.leaf_records * r, 64);
  const std::uint64_t permutation_bytes = align_up(4 * c.leaf_records, 64);
  // With less than half for the chunks, the buckets take a quarter.
  for (const std::uint64_t share : {budget / 2, budget / 4}) {
    f.split.bucket_buffer_bytes = bucket_buffer_bytes(share, p);
    const std::uint64_t chunk_budget = budget - 2 * p * f.split.bucket_buffer_bytes;
    f.group_chunks = std::min(tuning::kMaxChunkGroup, chunk_budget / (3 * chunk_bytes));
    if (f.group_chunks > 0) {
      f.split.chunk_memory_bytes = 3 * f.group_chunks * chunk_bytes;
      return f;
    }
    f.indexed = true;
    f.group_chunks = 1;
    f.read_ahead = 2 * chunk_bytes + permutation_bytes <= chunk_budget;
    f.split.chunk_memory_bytes = (f.read_ahead ? 2 : 1) * chunk_bytes + permutation_bytes;
    if (f.split.chunk_memory_bytes <= chunk_budget) return f;
    f.indexed = false;
  }
  f.group_chunks = 0;
  return f;
}

std::unique_ptr<ChunkGroups> open_fixed_chunk_groups(const core::Node& node, const io::ByteExtents& data,
                                                     std::uint64_t first_chunk, std::uint64_t end_chunk,
                                                     const FixedSplit& layout, const WalkOptions& o,
                                                     RunContext& ctx) {
  return std::make_unique<FixedChunkGroups>(node, data, first_chunk, end_chunk, layout, o, ctx);
}

}  // namespace extshuffle::ioperm
