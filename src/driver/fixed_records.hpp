// Fixed-size records (--record-size, .npy rows, shuf's generated inputs are
// text): the record layout where every size is known from the plan, so
// chunks are read by offset, shuffled as records (not indices), and every
// bucket fills exactly its region of scratch space.
#pragma once

#include <cstddef>
#include <cstdint>

#include "record_layout.hpp"

namespace extshuffle::driver {

class FixedRecords final : public RecordLayout {
 public:
  explicit FixedRecords(const ExternalOptions& options) : o_(options), r_(options.record_size) {}

  // Smallest budget: gathering a chunk by index holds its permutation and
  // inverse (8 bytes a record) in three quarters of the budget, with room
  // for a read buffer and a window of at least one record each.
  static std::uint64_t minimum_memory_bytes(const core::PlanConstants& constants, std::size_t record_size);

  void check_budget(std::uint64_t records, std::uint64_t bytes, std::uint64_t budget) const override;
  std::uint64_t in_memory_bytes(std::uint64_t records, std::uint64_t bytes, std::uint64_t budget) const override;
  // Half the budget: the node is held twice (memory_executor.hpp).
  bool fits_in_memory(std::uint64_t, std::uint64_t bytes, std::uint64_t budget) const override {
    return bytes <= budget / 2 / 64 * 64;
  }
  void run_in_memory(const core::Node& node, const io::ByteExtents& data, bool root, RunContext& ctx) const override;
  void gather_leaf(const core::Node& node, const io::ByteExtents& data, bool root, RunContext& ctx,
                   const OnWindow& on_window) const override;
  SplitLayout split_layout(std::uint64_t p, std::uint64_t budget) const override;
  // The plan fixes every bucket's size: no slack, no overflow.
  std::uint64_t bucket_region_bytes(std::uint64_t, std::uint64_t, std::uint64_t bucket_records) const override {
    return bucket_records * r_;
  }
  bool buckets_may_overflow() const override { return false; }
  std::unique_ptr<ChunkGroups> open_chunk_groups(const core::Node& node, const io::ByteExtents& data, bool root,
                                                 std::uint64_t first_chunk, std::uint64_t end_chunk,
                                                 std::uint64_t chunk_memory_bytes, RunContext& ctx) const override;
  // A bucket's workspace is as large as its bytes (the shuffled copy).
  bool runs_in_group(std::uint64_t, std::uint64_t bytes, std::uint64_t workspace_bytes) const override {
    return bytes <= workspace_bytes;
  }
  void run_buckets_in_memory(const core::Node& node, std::uint64_t p, std::uint64_t first, std::uint64_t end,
                             std::span<const std::uint64_t> bucket_bytes, std::byte* input, std::byte* workspace,
                             RunContext& ctx) const override;

 private:
  const ExternalOptions& o_;
  std::size_t r_;
};

}  // namespace extshuffle::driver
