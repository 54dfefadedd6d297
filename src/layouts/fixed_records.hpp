// Fixed-size records (--record-size, .npy rows, the indices of shuf's
// generated inputs): the record layout where every size is known from the
// plan, so chunks are read by offset, shuffled as records (not indices), and
// every bucket fills exactly its region of scratch space.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ioperm/node_path.hpp"
#include "ioperm/record_layout.hpp"

namespace extshuffle::ioperm {

// A split whose chunks fit in memory: bucket buffers in one half of the
// budget, groups of chunks (two read buffers and a shuffled copy) in the rest.
struct FixedSplit {
  SplitLayout split;
  std::uint64_t group_chunks = 0;  // 0: not even one chunk fits
  bool indexed = false;            // one chunk, shuffled as an index permutation
  bool read_ahead = true;          // the next group read while this one is used
};
FixedSplit fixed_split(std::uint64_t p, std::size_t r, const core::PlanConstants& c, std::uint64_t budget);
std::unique_ptr<ChunkGroups> open_fixed_chunk_groups(const core::Node& node, const io::ByteExtents& data,
                                                     std::uint64_t first_chunk, std::uint64_t end_chunk,
                                                     const FixedSplit& layout, const WalkOptions& o,
                                                     RunContext& ctx);

class FixedRecords final : public RecordLayout {
 public:
  explicit FixedRecords(const WalkOptions& options) : o_(options), r_(options.record_size) {}

  const WalkOptions& options() const override { return o_; }
  bool framed() const override { return false; }
  RecordFraming framing(bool root) const override { return RecordFraming{r_, TextScan{{}, false, !root}}; }

  // The node once, and the in-RAM plan's workspace (memory_plan.hpp):
  // with the file read in batches for records shuffled in place, with the
  // placement of records one by one otherwise.
  std::uint64_t in_memory_bytes(const NodeFacts& node) const override;
  std::uint64_t in_memory_bytes(const NodeFacts& node, std::uint64_t budget) const override;
  void run_in_memory(const core::Node& node, const io::ByteExtents& data, const NodeFacts& facts, bool root,
                     RunContext& ctx) const override;
  std::uint64_t mapped_arena_bytes(const NodeFacts& node, std::uint64_t in_memory) const override;

  bool chunks_fit(const NodeFacts& node, std::uint64_t budget) const override;
  SplitLayout split_layout(std::uint64_t p, std::uint64_t budget) const override {
    return fixed_split(p, r_, o_.run.constants, budget).split;
  }
  std::unique_ptr<ChunkGroups> open_chunk_groups(const core::Node& node, const io::ByteExtents& data, bool root,
                                                 std::uint64_t first_chunk, std::uint64_t end_chunk,
                                                 std::uint64_t chunk_memory_bytes, RunContext& ctx) const override;
  // The plan fixes every bucket's size: no slack, no overflow.
  std::uint64_t bucket_region_bytes(std::uint64_t, std::uint64_t, std::uint64_t bucket_records,
                                    std::uint32_t tag_width) const override {
    return bucket_records * (r_ + tag_width);
  }
  bool buckets_may_overflow() const override { return false; }
  bool runs_in_group(const NodeFacts& bucket, std::uint64_t stored_bytes,
                     std::uint64_t workspace_bytes) const override;
  void run_buckets_in_memory(const core::Node& node, std::uint64_t p, std::uint64_t first, std::uint64_t end,
                             std::span<const std::uint64_t> bucket_bytes, bool tagged, std::byte* input,
                             std::byte* workspace, RunContext& ctx) const override;

 private:
  // Puts a node's records, read one by one from `data`, where the first
  // level of its plan puts them in `node_buffer` (leaf: in plan order).
  void place(const core::Node& node, const io::ByteExtents& data, const NodeFacts& facts, std::byte* node_buffer,
             std::byte* memory, RunContext& ctx) const;
  // The ways a node runs in RAM, fastest first: whole on the GPU (--device
  // cuda, records in plan order, the node read into one buffer and its
  // output written to another); read in batches and shuffled in place
  // (records in plan order, small ones); read a chunk at a time and moved
  // by index (a split whose chunk fits beside it); placed record by record,
  // then shuffled in place; placed, then moved by index.
  enum class InRam { kDevice, kRead, kReadIndexed, kPlaceShuffled, kPlaceIndexed };
  void run_on_device(const core::Node& node, const io::ByteExtents& data, std::byte* node_buffer,
                     std::byte* workspace, double& reading, RunContext& ctx) const;
  std::uint64_t way_bytes(const NodeFacts& node, InRam way) const;
  InRam way_for(const NodeFacts& node, std::uint64_t budget) const;
  std::uint64_t placement_bytes(const NodeFacts& node) const;
  std::uint64_t read_indexed_buffers(const NodeFacts& node) const;
  std::uint64_t placement_space(const NodeFacts& node) const;

  const WalkOptions& o_;
  std::size_t r_;
};

}  // namespace extshuffle::ioperm
