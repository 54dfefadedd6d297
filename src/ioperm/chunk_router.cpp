#include "chunk_router.hpp"

#include <algorithm>

#include "walk_support.hpp"
#include "extshuffle/device/permutation_indices.hpp"
#include "extshuffle/io/scratch_damage.hpp"

namespace extshuffle::ioperm {

std::uint64_t ChunkRouter::memory_bytes(const core::PlanConstants& c, std::uint64_t p, std::uint32_t max_open,
                                        bool leaf_orders) {
  const std::uint64_t per_record = align_up(4 * c.leaf_records, 64);
  return max_open * ((leaf_orders ? 2 : 1) * per_record + align_up(8 * (p + 1), 64) + align_up(8 * p, 64));
}

ChunkRouter::ChunkRouter(std::uint64_t seed, const core::Node& node, const core::PlanConstants& c,
                         std::uint64_t first_chunk, std::byte* memory, std::uint32_t max_open, int threads,
                         LeafOrders* leaf_orders, std::uint64_t already_routed)
    : seed_(seed), node_(node), c_(c), p_(core::bucket_count(node.records, c)),
      chunks_(core::chunk_count(node.records, c)), next_chunk_(first_chunk), first_chunk_(first_chunk),
      already_routed_(already_routed), threads_(threads), leaf_orders_(leaf_orders), rows_(seed, node, c), row_(p_),
      next_column_starts_(p_, 0), slots_(max_open) {
  std::byte* cursor = memory;
  for (Slot& slot : slots_) {
    slot.inverse = carve<std::uint32_t>(cursor, c.leaf_records);
    slot.slice_starts = carve<std::uint64_t>(cursor, p_ + 1);
    slot.column_starts = carve<std::uint64_t>(cursor, p_);
    if (leaf_orders != nullptr) slot.output = carve<std::uint32_t>(cursor, c.leaf_records);
  }
  if (first_chunk > 0) rows_.column_sums_before(first_chunk, next_column_starts_);
}

std::uint64_t ChunkRouter::open_for(const std::uint64_t* positions, std::uint64_t count) {
  for (std::uint64_t k = 0; k < count; ++k) {
    const std::uint64_t last = positions[k] / c_.leaf_records;
    if (last < next_chunk_) {
      // Open already, unless all its records have been routed: a position
      // seen twice, which only a damaged tag gives.
      const Slot& slot = slot_of(last);
      if (!slot.open || slot.chunk != last) io::throw_scratch_damaged();
      continue;
    }
    // Chunks open in order, each in slot chunk % max_open, which must be free.
    bool free = last - next_chunk_ < slots_.size();
    for (std::uint64_t i = next_chunk_; free && i <= last; ++i) free = !slot_of(i).open;
    if (!free) {
      // More chunks in progress than the routing above allows (docs/design.md,
      // "Large records"): positions out of their order, from damaged tags.
      if (k == 0) io::throw_scratch_damaged();
      return k;
    }
    while (next_chunk_ <= last) open(next_chunk_++);
  }
  return count;
}

void ChunkRouter::open(std::uint64_t i) {
  Slot& slot = slot_of(i);
  const std::uint64_t m = core::chunk_records(node_.records, i, c_);
  // 2. The chunk's shuffle as an inverse permutation; 1. its row of the matrix.
  device::shuffle_inverse(core::shuffle_bijection(seed_, {node_.id, core::Purpose::kChunkShuffle, i}, m), m,
                          slot.inverse, threads_);
  rows_.draw(i, i + 1, row_);
  slot.slice_starts[0] = 0;
  for (std::uint64_t j = 0; j < p_; ++j) {
    slot.slice_starts[j + 1] = slot.slice_starts[j] + row_[j];
    slot.column_starts[j] = next_column_starts_[j];
    next_column_starts_[j] += row_[j];
  }
  // Bucket j's slice of this chunk takes the bucket's positions from
  // column_starts[j] on, in shuffled order: their places in leaf j follow.
  if (leaf_orders_ != nullptr) leaf_orders_->copy_slices(slot.column_starts, row_.data(), slot.slice_starts, slot.output);
  slot.chunk = i;
  slot.records = m;
  slot.seen = i == first_chunk_ ? already_routed_ : 0;
  slot.open = slot.seen < m;
}

ChunkRouter::Destination ChunkRouter::route(std::uint64_t position) const {
  const std::uint64_t i = position / c_.leaf_records;
  const Slot& slot = slot_of(i);
  const std::uint64_t k = slot.inverse[position - i * c_.leaf_records];
  // 3. The bucket whose slice of the shuffled chunk holds position k.
  const std::uint64_t j =
      static_cast<std::uint64_t>(std::upper_bound(slot.slice_starts, slot.slice_starts + p_ + 1, k) -
                                 slot.slice_starts) - 1;
  return {j, slot.column_starts[j] + (k - slot.slice_starts[j]), slot.output != nullptr ? slot.output[k] : 0};
}

void ChunkRouter::routed(std::uint64_t position, std::uint64_t count) {
  Slot& slot = slot_of(position / c_.leaf_records);
  slot.seen += count;
  if (slot.seen == slot.records) slot.open = false;
}

}  // namespace extshuffle::ioperm
