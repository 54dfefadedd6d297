#include "leaf_orders.hpp"

#include <algorithm>

#include "walk_support.hpp"
#include "extshuffle/device/permutation_indices.hpp"
#include "extshuffle/io/scratch_damage.hpp"
#include "extshuffle/ioperm/phase_timer.hpp"

namespace extshuffle::ioperm {
namespace {

// Write buffers of the scratch copy: the orders are written one leaf after
// the other, so small buffers lose nothing (each leaf is one append).
constexpr std::uint64_t kOrderBufferBytes = io::kScratchAlign;

// Leaf j's order: the output position in leaf j of the record at each of
// its positions, the same bijection run_leaf_in_windows and the in-RAM leaf
// use.
void compute_order(const RecordLayout& layout, const core::Node& node, std::uint64_t p, std::uint64_t j,
                   std::uint32_t* to, int threads) {
  const core::Node leaf = core::bucket_node(node, p, j);
  device::shuffle_inverse(
      core::shuffle_bijection(layout.options().run.seed, {leaf.id, core::Purpose::kLeafShuffle, 0}, leaf.records),
      leaf.records, to, threads);
}

std::vector<std::uint64_t> leaf_firsts(const core::Node& node, std::uint64_t p) {
  std::vector<std::uint64_t> firsts(p + 1);
  for (std::uint64_t j = 0; j <= p; ++j) firsts[j] = core::bucket_first(node.records, p, j);
  return firsts;
}

}  // namespace

std::uint64_t LeafOrders::memory_bytes(std::uint64_t records) { return align_up(4 * records, 64); }

std::uint64_t LeafOrders::workspace_bytes(const core::PlanConstants& c, std::uint64_t p) {
  return align_up(4 * c.leaf_records, 64) + 2 * p * kOrderBufferBytes;
}

LeafOrders::LeafOrders(const RecordLayout& layout, const core::Node& node, std::uint64_t p, std::uint32_t* memory,
                       RunContext& ctx)
    : p_(p), firsts_(leaf_firsts(node, p)), memory_(memory), ctx_(ctx) {
  PhaseTimer timer(ctx.stats.seconds_shuffling);
  for (std::uint64_t j = 0; j < p; ++j) compute_order(layout, node, p, j, memory + firsts_[j], ctx.threads);
}

LeafOrders::LeafOrders(const RecordLayout& layout, const core::Node& node, std::uint64_t p, io::BucketStore& store,
                       std::byte* workspace, RunContext& ctx)
    : p_(p), firsts_(leaf_firsts(node, p)), ctx_(ctx) {
  const core::PlanConstants& c = layout.options().run.constants;
  std::vector<std::uint64_t> region_bytes(p);
  for (std::uint64_t j = 0; j < p; ++j) region_bytes[j] = 4 * (firsts_[j + 1] - firsts_[j]);
  std::unique_ptr<bool[]> kept(new bool[p]);
  std::fill(kept.get(), kept.get() + p, true);
  auto* order = reinterpret_cast<std::uint32_t*>(workspace);
  stored_ = std::make_unique<io::BucketStore::Split>(store, region_bytes, std::span<const bool>(kept.get(), p), false,
                                                     workspace + align_up(4 * c.leaf_records, 64), kOrderBufferBytes);
  for (std::uint64_t j = 0; j < p; ++j) {
    {
      PhaseTimer timer(ctx.stats.seconds_shuffling);
      compute_order(layout, node, p, j, order, ctx.threads);
    }
    PhaseTimer timer(ctx.stats.seconds_writing);
    stored_->writer(j).append(reinterpret_cast<const std::byte*>(order), region_bytes[j]);
    // The next leaf's order overwrites this one: the writer must be done.
    stored_->writer(j).finish();
  }
  PhaseTimer timer(ctx.stats.seconds_writing);
  ctx.stats.bytes_written += stored_->finish();
}

LeafOrders::~LeafOrders() = default;

void LeafOrders::copy_slices(const std::uint64_t* columns, const std::uint64_t* rows, const std::uint64_t* slices,
                             std::uint32_t* to) {
  if (memory_ != nullptr) {
    for (std::uint64_t j = 0; j < p_; ++j) std::copy_n(memory_ + firsts_[j] + columns[j], rows[j], to + slices[j]);
    return;
  }
  PhaseTimer timer(ctx_.stats.seconds_reading);
  std::vector<io::ExtentReader> readers;
  readers.reserve(p_);
  for (std::uint64_t j = 0; j < p_; ++j) {
    if (rows[j] == 0) continue;
    readers.emplace_back(stored_->bucket(j));
    readers.back().seek(4 * columns[j]);
    readers.back().start(reinterpret_cast<std::byte*>(to + slices[j]), 4 * rows[j]);
    ctx_.stats.bytes_read += 4 * rows[j];
  }
  for (io::ExtentReader& reader : readers) reader.finish();
  // Read back from scratch: each output position must lie in its leaf
  // before the router divides it into windows (io/scratch_damage.hpp).
  for (std::uint64_t j = 0; j < p_; ++j) {
    const std::uint32_t* slice = to + slices[j];
    const std::uint64_t leaf_records = firsts_[j + 1] - firsts_[j];
    if (rows[j] > 0 && *std::max_element(slice, slice + rows[j]) >= leaf_records) io::throw_scratch_damaged();
  }
}

void LeafOrders::discard() {
  if (stored_ == nullptr) return;
  for (std::uint64_t j = 0; j < p_; ++j) stored_->discard(j);
}

}  // namespace extshuffle::ioperm
