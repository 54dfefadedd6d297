// Framed records of every framing (lines, CSV, TSV, JSONL, TFRecord frames,
// tar samples; docs/conventions.md, Record formats): the record layout
// where sizes are found by scanning with the records' syntax. Chunks are shuffled as
// 4-byte record indices and the bytes gathered in that order; a bucket's
// size is known only after the scatter, so each gets a region of its
// expected size plus slack and overflow extents beyond it.
#pragma once

#include <cstdint>

#include "extshuffle/ioperm/text_shuffle.hpp"
#include "ioperm/node_path.hpp"
#include "ioperm/record_layout.hpp"
#include "ioperm/text_scan.hpp"

namespace extshuffle::ioperm {

// How a split of text records with its chunks in memory carves the chunk
// memory: the chunk space (read ahead, records located in place) and the
// index arrays of a group of chunks.
struct TextSplit {
  SplitLayout split;
  std::uint64_t group_chunks = 1;
  std::uint64_t space_bytes = 0;  // 0: the budget leaves no chunk space
  std::uint64_t arrays_bytes = 0;
};
TextSplit text_split(std::uint64_t p, const core::PlanConstants& c, std::uint64_t budget);

class TextRecords final : public RecordLayout {
 public:
  explicit TextRecords(const TextOptions& options) : o_(options) {}

  const WalkOptions& options() const override { return o_.walk; }
  bool framed() const override { return true; }
  RecordFraming framing(bool root) const override { return RecordFraming{0, scan(root)}; }

  // The node's bytes, the place of each record (8 bytes; 12 for records
  // that arrive behind tags), the plan run on 4-byte indices held once, the
  // gather batch's offsets and the output staging; at most 2^32 - 1 records.
  std::uint64_t in_memory_bytes(const NodeFacts& node) const override;
  // Reads the node (unless the run mapped it while counting: run_context.hpp),
  // finds its records, shuffles their indices with the plan, gathers the
  // bytes in batches on all threads.
  void run_in_memory(const core::Node& node, const io::ByteExtents& data, const NodeFacts& facts, bool root,
                     RunContext& ctx) const override;

  // Chunks fit when L records of the input's longest do (a bound that
  // holds in every bucket: buckets are samples of the input's records).
  bool chunks_fit(const NodeFacts& node, std::uint64_t budget) const override;
  SplitLayout split_layout(std::uint64_t p, std::uint64_t budget) const override {
    return text_split(p, o_.walk.run.constants, budget).split;
  }
  std::unique_ptr<ChunkGroups> open_chunk_groups(const core::Node& node, const io::ByteExtents& data, bool root,
                                                 std::uint64_t first_chunk, std::uint64_t end_chunk,
                                                 std::uint64_t chunk_memory_bytes, RunContext& ctx) const override;
  // The bucket's expected share of the node's bytes, its tags, and slack.
  std::uint64_t bucket_region_bytes(std::uint64_t record_bytes, std::uint64_t n, std::uint64_t bucket_records,
                                    std::uint32_t tag_width) const override;
  bool buckets_may_overflow() const override { return true; }
  bool runs_in_group(const NodeFacts& bucket, std::uint64_t stored_bytes,
                     std::uint64_t workspace_bytes) const override;
  void run_buckets_in_memory(const core::Node& node, std::uint64_t p, std::uint64_t first, std::uint64_t end,
                             std::span<const std::uint64_t> bucket_bytes, bool tagged, std::byte* input,
                             std::byte* workspace, RunContext& ctx) const override;

  TextScan scan(bool root) const { return TextScan{o_.syntax, root && o_.skip_blank, !root || o_.root_spooled}; }

 private:
  const TextOptions& o_;
};

// A text node whose `size` bytes are at `bytes` (records in plan order, or
// each behind its position tag), run in RAM with the arrays carved from
// `workspace` on (text_in_memory.cpp).
void run_text_in_memory(const core::Node& node, const std::byte* bytes, std::uint64_t size, bool tagged,
                        const TextScan& scan, std::byte* workspace, const TextOptions& o, RunContext& ctx);
// The workspace run_text_in_memory needs for a node of `records` records.
std::uint64_t text_in_memory_workspace_bytes(std::uint64_t records, bool tagged, const TextOptions& o);

std::unique_ptr<ChunkGroups> open_text_chunk_groups(const core::Node& node, const io::ByteExtents& data,
                                                    std::uint64_t end_chunk, const TextScan& scan,
                                                    const TextSplit& layout, const TextOptions& o,
                                                    RunContext& ctx);

}  // namespace extshuffle::ioperm
