// Where each record of a split node goes when the node's chunks are not
// shuffled in memory but routed record by record (docs/design.md, "Large
// records"): record e of chunk i takes position k = inverse_i[e] of the
// shuffled chunk (device::shuffle_inverse, the same bijective shuffle the
// chunk would get in memory), and row i of the communication matrix puts
// position k in bucket j, at position colstart_i[j] + k - slice_i[j] of that
// bucket, where slice_i[j] is where bucket j's slice of the shuffled chunk
// starts and colstart_i[j] how many records the chunks before i put in
// bucket j. So the record lands exactly where steps 2-3 of the split would
// have put it.
//
// Chunks open in order as positions reach them and close once all their
// records have been routed. A node read in plan order has one open at a
// time; a bucket that a routing split filled holds its records in the order
// they were read, which mixes at most two of its chunks at any point, and
// each routing level adds one (docs/design.md), so `max_open` = the routing
// splits above the node + 1.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "extshuffle/core/plan.hpp"
#include "leaf_orders.hpp"
#include "matrix_rows.hpp"

namespace extshuffle::ioperm {

class ChunkRouter {
 public:
  // Memory for a node of p buckets with up to `max_open` chunks open: per
  // open chunk its inverse (4 bytes a record) and 16 bytes a bucket, and
  // with `leaf_orders` 4 bytes a record more (the output positions).
  static std::uint64_t memory_bytes(const core::PlanConstants& c, std::uint64_t p, std::uint32_t max_open,
                                    bool leaf_orders = false);

  // Routes the chunks of `node` from `first_chunk` on (positions are the
  // node's own, so chunk first_chunk starts at chunk_first(first_chunk)).
  // With `leaf_orders` (the buckets are leaves: leaf_orders.hpp), each
  // destination also says the record's output position in its leaf. A
  // scatter resumed inside chunk first_chunk (walk_checkpoint.hpp) routed
  // its first `already_routed` records before.
  ChunkRouter(std::uint64_t seed, const core::Node& node, const core::PlanConstants& c, std::uint64_t first_chunk,
              std::byte* memory, std::uint32_t max_open, int threads, LeafOrders* leaf_orders = nullptr,
              std::uint64_t already_routed = 0);

  // Opens, in order, the chunks the records at `positions` need, for the
  // longest prefix of them that max_open chunks allow while the chunks of
  // earlier records are still open; returns its length. Route and mark
  // routed that prefix, then call again for the rest. On the driving
  // thread. `positions` are below the node's records (the record stream
  // checks tags). Throws Error (io/scratch_damage.hpp) for a position
  // of a chunk already routed whole, or if not even one more record can be
  // routed (more chunks in progress than the plan allows): only positions
  // read from damaged scratch do either.
  std::uint64_t open_for(const std::uint64_t* positions, std::uint64_t count);

  struct Destination {
    std::uint64_t bucket;
    std::uint64_t position;  // in the bucket
    std::uint64_t output;    // in the leaf's output (with leaf orders; otherwise 0)
  };
  // Any thread, once open_through() has covered `position`.
  Destination route(std::uint64_t position) const;

  // `count` records of the chunk holding `position` have been routed; a
  // chunk is closed once all its records have. On the driving thread.
  void routed(std::uint64_t position, std::uint64_t count = 1);

 private:
  struct Slot {
    std::uint64_t chunk = 0, records = 0, seen = 0;
    bool open = false;
    std::uint32_t* inverse = nullptr;
    std::uint64_t* slice_starts = nullptr;  // p + 1
    std::uint64_t* column_starts = nullptr;  // p
    std::uint32_t* output = nullptr;         // with leaf orders: per shuffled position, its place in its leaf
  };
  void open(std::uint64_t chunk);
  Slot& slot_of(std::uint64_t chunk) { return slots_[chunk % slots_.size()]; }
  const Slot& slot_of(std::uint64_t chunk) const { return slots_[chunk % slots_.size()]; }

  std::uint64_t seed_;
  core::Node node_;
  core::PlanConstants c_;
  std::uint64_t p_, chunks_, next_chunk_;
  std::uint64_t first_chunk_, already_routed_;
  int threads_;
  LeafOrders* leaf_orders_;
  ChunkRows rows_;
  std::vector<std::uint64_t> row_, next_column_starts_;
  std::vector<Slot> slots_;
};

}  // namespace extshuffle::ioperm
