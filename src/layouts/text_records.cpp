#include "text_records.hpp"

#include <algorithm>

#include "ioperm/walk_support.hpp"
#include "extshuffle/errors.hpp"
#include "ioperm/tuning.hpp"

namespace extshuffle::ioperm {
namespace {

// Shuffling G chunks at once: one identity array, and per chunk the
// permutation and the record offsets (4 bytes each).
std::uint64_t group_arrays_bytes(std::uint64_t leaf_records, std::uint64_t group) {
  return align_up(4 * leaf_records, 64) + align_up(group * 4 * (2 * leaf_records + 1), 64);
}

}  // namespace

std::uint64_t TextRecords::in_memory_bytes(const NodeFacts& node) const {
  if (node.records >= (std::uint64_t{1} << 32)) return UINT64_MAX;
  return align_up(stored_bytes(*this, node), 64) + text_in_memory_workspace_bytes(node.records, node.tagged, o_);
}

void TextRecords::run_in_memory(const core::Node& node, const io::ByteExtents& data, const NodeFacts& facts,
                                bool root, RunContext& ctx) const {
  if (root && ctx.root_mapped && data.extents.size() == 1 && data.extents[0].file == nullptr) {
    // Mapped while counted: run where the records lie.
    run_text_in_memory(node, data.extents[0].memory, data.bytes, facts.tagged, scan(root), ctx.arena, o_, ctx);
    return;
  }
  std::byte* bytes = ctx.arena;
  {
    PhaseTimer timer(ctx.stats.seconds_reading);
    io::ExtentReader(data).read_now(bytes, data.bytes);
    ctx.stats.bytes_read += data.bytes;
  }
  run_text_in_memory(node, bytes, data.bytes, facts.tagged, scan(root), bytes + align_up(data.bytes, 64), o_, ctx);
}

bool TextRecords::chunks_fit(const NodeFacts& node, std::uint64_t budget) const {
  if (node.tagged) return false;
  const TextSplit s =
      text_split(core::bucket_count(node.records, o_.walk.run.constants), o_.walk.run.constants, budget);
  // With the longest record unknown (0), the whole node is the bound.
  const auto longest_chunk =
      node.max_record_bytes == 0
          ? static_cast<unsigned __int128>(node.record_bytes)
          : static_cast<unsigned __int128>(o_.walk.run.constants.leaf_records) * node.max_record_bytes;
  return s.space_bytes > 0 && std::min<unsigned __int128>(node.record_bytes, longest_chunk) <= s.space_bytes;
}

// Bucket buffers take half of the budget (as for fixed-size records); the
// other half holds the index arrays and the chunk space, into which the
// node's bytes are read ahead while earlier chunks are shuffled and scattered.
TextSplit text_split(std::uint64_t p, const core::PlanConstants& c, std::uint64_t budget) {
  TextSplit s;
  if (budget / 2 < 2 * p * 64) return s;  // not even 64-byte bucket buffers
  s.split.bucket_buffer_bytes = bucket_buffer_bytes(budget / 2, p);
  const std::uint64_t left = budget - 2 * p * s.split.bucket_buffer_bytes;
  const std::uint64_t per_chunk = 8 * c.leaf_records + 4;
  s.group_chunks = std::clamp<std::uint64_t>(left / 4 / per_chunk, 1, tuning::kMaxChunkGroup);
  s.arrays_bytes = group_arrays_bytes(c.leaf_records, s.group_chunks);
  if (left < s.arrays_bytes + tuning::kMinChunkSpace) return s;
  s.space_bytes = std::min(align_down(left - s.arrays_bytes, 64), tuning::kMaxChunkSpace);
  s.split.chunk_memory_bytes = align_up(s.space_bytes, 64) + align_up(s.arrays_bytes, 64);
  return s;
}

std::uint64_t TextRecords::bucket_region_bytes(std::uint64_t record_bytes, std::uint64_t n,
                                               std::uint64_t bucket_records, std::uint32_t tag_width) const {
  const auto expected = static_cast<std::uint64_t>(static_cast<unsigned __int128>(record_bytes) * bucket_records / n);
  return align_up(expected + expected / tuning::kRegionSlackDivisor + bucket_records * tag_width +
                      tuning::kRegionSlackBytes,
                  io::kScratchAlign);
}

std::unique_ptr<ChunkGroups> TextRecords::open_chunk_groups(const core::Node& node, const io::ByteExtents& data,
                                                            bool root, std::uint64_t, std::uint64_t end_chunk,
                                                            std::uint64_t, RunContext& ctx) const {
  return open_text_chunk_groups(node, data, end_chunk, scan(root),
                                text_split(core::bucket_count(node.records, o_.walk.run.constants),
                                           o_.walk.run.constants, o_.walk.run.memory_bytes),
                                o_, ctx);
}

bool TextRecords::runs_in_group(const NodeFacts& bucket, std::uint64_t stored_bytes,
                                std::uint64_t workspace_bytes) const {
  return bucket.records < (std::uint64_t{1} << 32) && stored_bytes <= workspace_bytes &&
         text_in_memory_workspace_bytes(bucket.records, bucket.tagged, o_) <= workspace_bytes;
}

void TextRecords::run_buckets_in_memory(const core::Node& node, std::uint64_t p, std::uint64_t first,
                                        std::uint64_t end, std::span<const std::uint64_t> bucket_bytes, bool tagged,
                                        std::byte* input, std::byte* workspace, RunContext& ctx) const {
  const std::byte* at = input;
  for (std::uint64_t j = first; j < end && !ctx.output.done(); ++j) {
    run_text_in_memory(core::bucket_node(node, p, j), at, bucket_bytes[j - first], tagged, scan(false), workspace, o_,
                       ctx);
    at += bucket_bytes[j - first];
  }
}

}  // namespace extshuffle::ioperm
