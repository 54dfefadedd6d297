// How a rank's budget (-S, a cap on its resident memory) is shared while
// the root's split is scattered and exchanged: the walk's chunk memory
// (the first part of the scatter walk's arena, the only part the scatter
// touches; the rest of that arena is what a split would give its bucket
// buffers, and the exchange's buffers below take its place), the pool of
// blocks that holds what one chunk group (or one routed batch) scatters to
// other ranks, one sub-round's receive buffer, and two write buffers per
// (source, bucket) pair of the buckets this rank owns. Afterwards the rank's
// buckets run with the whole budget.
#pragma once

#include <cstdint>
#include <optional>

#include "distribution.hpp"
#include "extshuffle/ioperm/distributed_walk.hpp"

namespace extshuffle::mpi {

struct ExchangeBudget {
  std::uint64_t scatter_arena_bytes = 0;  // the scatter walk's budget
  std::uint64_t chunk_memory_bytes = 0;   // of which the scatter touches this much
  std::uint64_t pool_bytes = 0, block_bytes = 0;
  std::uint64_t receive_bytes = 0;
  std::uint64_t writer_buffer_bytes = 0;  // each of the two per pair
  std::uint64_t writer_pairs = 0;
  std::uint64_t total() const {
    return chunk_memory_bytes + pool_bytes + receive_bytes + 2 * writer_pairs * writer_buffer_bytes;
  }
};

// The shares for rank `rank` of `d` under `budget` bytes when the root's
// split (whose facts are `root`) takes `path` (kChunksInMemory or kRouted),
// with `walk`'s rules for its chunk memory; nullopt when no share of the
// budget holds the path's chunk memory (for kChunksInMemory: whole chunks),
// its pool and a minimal buffer per pair and per rank.
std::optional<ExchangeBudget> plan_exchange_budget(const ioperm::DistributedWalk& walk, const Distribution& d, int rank,
                                                   std::uint64_t budget, const ioperm::NodeFacts& root,
                                                   ioperm::NodePath path);


}  // namespace extshuffle::mpi
