// The output position, in its leaf, of every record of a split's buckets:
// the leaves' inverse permutations, for a split that routes its records
// straight into its leaves' windows (bucket_windows.hpp). The router needs,
// for each chunk it opens, the slice of each leaf's order that the chunk's
// records take (chunk_router.hpp), and those slices follow each other: each
// leaf's order is read front to back over the split. So the orders are held
// in memory when 4 bytes a record of the node fit the budget beside the
// routing, and otherwise computed before the split, written to scratch space
// (one region per leaf) and read back a chunk's slices at a time: 4 bytes a
// record written and read, about 1% of the records' bytes where windows are
// needed at all (records of hundreds of bytes and more).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "extshuffle/core/plan.hpp"
#include "extshuffle/io/bucket_store.hpp"
#include "record_layout.hpp"

namespace extshuffle::ioperm {

class LeafOrders {
 public:
  // Bytes of the orders held in memory: 4 a record of the node.
  static std::uint64_t memory_bytes(std::uint64_t records);
  // The workspace that writing them to scratch takes: the largest leaf's
  // order and two write buffers per leaf.
  static std::uint64_t workspace_bytes(const core::PlanConstants& c, std::uint64_t p);

  // Computes the orders of the p leaves of `node` into `memory`.
  LeafOrders(const RecordLayout& layout, const core::Node& node, std::uint64_t p, std::uint32_t* memory,
             RunContext& ctx);
  // Computes them in `workspace` (workspace_bytes) and writes them to
  // scratch space from `store`, below any split made after this one.
  LeafOrders(const RecordLayout& layout, const core::Node& node, std::uint64_t p, io::BucketStore& store,
             std::byte* workspace, RunContext& ctx);
  LeafOrders(const LeafOrders&) = delete;
  LeafOrders& operator=(const LeafOrders&) = delete;
  ~LeafOrders();

  // For each leaf j with rows[j] > 0: its orders at bucket positions
  // [columns[j], columns[j] + rows[j]) copied to to + slices[j]. The reads
  // of the scratch copy are all started, then awaited; Error if one
  // read back lies outside its leaf (io/scratch_damage.hpp).
  void copy_slices(const std::uint64_t* columns, const std::uint64_t* rows, const std::uint64_t* slices,
                   std::uint32_t* to);
  // The scratch copy is spent: its space is given back to the disk now.
  void discard();

 private:
  std::uint64_t p_;
  std::vector<std::uint64_t> firsts_;  // leaf j's orders start at record firsts_[j] of the node
  std::uint32_t* memory_ = nullptr;
  std::unique_ptr<io::BucketStore::Split> stored_;
  RunContext& ctx_;
};

}  // namespace extshuffle::ioperm
