// Text records (lines, CSV, TSV, JSONL; DESIGN.md 2.5): the record layout
// where sizes are found by scanning for terminators. Chunks are shuffled as
// 4-byte record indices and the bytes gathered in that order; a bucket's
// size is known only after the scatter, so each gets a region of its
// expected size plus slack and overflow extents beyond it.
#pragma once

#include <cstdint>

#include "extshuffle/driver/variable_executor.hpp"
#include "record_layout.hpp"
#include "text_scan.hpp"

namespace extshuffle::driver {

// How a streaming node of text records carves its chunk memory: the chunk
// space (read ahead, records located in place) and the index arrays.
struct TextSplit {
  SplitLayout split;
  std::uint64_t group_chunks = 1;
  std::uint64_t space_bytes = 0;
  std::uint64_t arrays_bytes = 0;
};
TextSplit text_split(std::uint64_t p, const core::PlanConstants& c, std::uint64_t budget);

class TextRecords final : public RecordLayout {
 public:
  explicit TextRecords(const VariableOptions& options) : o_(options) {}

  // Smallest budget for an input that does not fit in it: bucket buffers of
  // 4 KiB at full fanout in one half; the gather arrays and a minimal chunk
  // space in the other (about 65 MiB with the shipped L and F).
  static std::uint64_t minimum_memory_bytes(const core::PlanConstants& constants);

  // Only an input that does not fit is held to the minimum.
  void check_budget(std::uint64_t records, std::uint64_t bytes, std::uint64_t budget) const override;
  // The node's bytes, 8-byte record offsets, two 4-byte index arrays, the
  // gather batch's offsets and the output staging; at most 2^32 - 1 records.
  std::uint64_t in_memory_bytes(std::uint64_t records, std::uint64_t bytes, std::uint64_t budget) const override;
  bool fits_in_memory(std::uint64_t records, std::uint64_t bytes, std::uint64_t budget) const override {
    return records < (std::uint64_t{1} << 32) && in_memory_bytes(records, bytes, budget) <= budget;
  }
  // Finds the records (in bulk for plain terminators), shuffles their
  // indices with the plan, gathers the bytes in batches on all threads.
  void run_in_memory(const core::Node& node, const io::ByteExtents& data, bool root, RunContext& ctx) const override;
  void gather_leaf(const core::Node& node, const io::ByteExtents& data, bool root, RunContext& ctx,
                   const OnWindow& on_window) const override;
  SplitLayout split_layout(std::uint64_t p, std::uint64_t budget) const override {
    return text_split(p, o_.constants, budget).split;
  }
  // The bucket's expected share of the node's bytes plus slack (tuning.hpp).
  std::uint64_t bucket_region_bytes(std::uint64_t node_bytes, std::uint64_t n,
                                    std::uint64_t bucket_records) const override;
  bool buckets_may_overflow() const override { return true; }
  std::unique_ptr<ChunkGroups> open_chunk_groups(const core::Node& node, const io::ByteExtents& data, bool root,
                                                 std::uint64_t first_chunk, std::uint64_t end_chunk,
                                                 std::uint64_t chunk_memory_bytes, RunContext& ctx) const override;
  // A bucket's workspace: its record offsets, index arrays and staging.
  bool runs_in_group(std::uint64_t records, std::uint64_t, std::uint64_t workspace_bytes) const override {
    return records < (std::uint64_t{1} << 32) && in_memory_bytes(records, 0, o_.memory_bytes) <= workspace_bytes;
  }
  void run_buckets_in_memory(const core::Node& node, std::uint64_t p, std::uint64_t first, std::uint64_t end,
                             std::span<const std::uint64_t> bucket_bytes, std::byte* input, std::byte* workspace,
                             RunContext& ctx) const override;

  TextScan scan(bool root) const { return TextScan{o_.syntax, root && o_.skip_blank}; }

 private:
  // A node whose `size` bytes are at `bytes`, run with the arrays carved
  // from `workspace` on (in_memory_bytes less the bytes' own space).
  void run_loaded(const core::Node& node, const std::byte* bytes, std::uint64_t size, bool root,
                  std::byte* workspace, RunContext& ctx) const;

  const VariableOptions& o_;
};


std::unique_ptr<ChunkGroups> open_text_chunk_groups(const core::Node& node, const io::ByteExtents& data,
                                                    std::uint64_t end_chunk, const TextScan& scan,
                                                    const TextSplit& layout, const VariableOptions& o,
                                                    RunContext& ctx);

}  // namespace extshuffle::driver
