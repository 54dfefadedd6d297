#include "exchange_budget.hpp"

#include <algorithm>

#include "driver/tuning.hpp"
#include "extshuffle/errors.hpp"
#include "extshuffle/io/bucket_store.hpp"
#include "received_buckets.hpp"

namespace extshuffle::mpi {
namespace {

constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;
// Pool blocks: a quarter of the chunk memory spread over the other ranks'
// buckets (each holds at most one block partly filled), between a cache
// line and 1 MiB. Not measured: blocks only bound the pool's slack.
constexpr std::uint64_t kMinBlockBytes = 64;
constexpr std::uint64_t kMaxBlockBytes = kMiB;

std::uint64_t align_down(std::uint64_t x, std::uint64_t a) { return x / a * a; }

// The smallest receive slot and pair buffer worth running with (not
// measured: below them the rounds and the writes cost more than they move).
constexpr std::uint64_t kMinSlotBytes = 4096;
constexpr std::uint64_t kMinPairBufferBytes = 4096;

// The pool that holds what one group of chunks (at most the chunk memory)
// scatters to other ranks, with one block of slack per such bucket.
void size_pool(ExchangeBudget& b, std::uint64_t remote) {
  b.block_bytes = b.pool_bytes = 0;
  if (remote == 0) return;
  b.block_bytes = std::clamp(align_down(b.chunk_memory_bytes / (4 * remote), 64), kMinBlockBytes, kMaxBlockBytes);
  b.pool_bytes = b.chunk_memory_bytes + remote * b.block_bytes;
}

}  // namespace

ExchangeBudget plan_exchange_budget(const driver::RecordLayout& layout, const Distribution& d, int rank,
                                    std::uint64_t budget) {
  ExchangeBudget b;
  const std::uint64_t own = d.end_bucket(rank) - d.first_bucket(rank), remote = d.buckets - own;
  b.writer_pairs = ReceivedBuckets::pairs(d, rank);
  const std::uint64_t least_rest =
      (d.ranks > 1 ? static_cast<std::uint64_t>(d.ranks - 1) * kMinSlotBytes : 0) + 2 * b.writer_pairs * kMinPairBufferBytes;
  // The scatter walk's budget: half of -S gives it a chunk memory of about
  // a quarter, as a split of that budget gets. Where that is too little to
  // hold whole chunks (they would be gathered in windows, one pass over a
  // chunk per window) or below the layout's smallest, up to three quarters,
  // as long as the pool and the least receive and write buffers still fit.
  bool found = false;
  for (const std::uint64_t arena : {budget / 2, budget / 8 * 5, budget / 3 * 2, budget / 4 * 3}) {
    driver::SplitLayout split;
    try {
      split = layout.split_layout(d.buckets, arena);
    } catch (const BudgetError&) {
      continue;
    }
    ExchangeBudget candidate = b;
    candidate.scatter_arena_bytes = arena;
    candidate.chunk_memory_bytes = split.chunk_memory_bytes;
    size_pool(candidate, remote);
    const bool fits = candidate.chunk_memory_bytes + candidate.pool_bytes + least_rest <= budget;
    if (fits && (!found || !split.chunks_gathered)) {
      b = candidate;
      found = true;
      if (!split.chunks_gathered) break;
    }
  }
  if (!found) {
    throw BudgetError("--memory too small for " + std::to_string(d.ranks) + " ranks: " + std::to_string(budget) +
                      " bytes cannot hold a chunk group, its slices for other ranks and a buffer per rank and bucket");
  }
  // The rest: one half receives a sub-round (a slot per other rank), the
  // other half buffers the writes of the (source, bucket) pairs.
  std::uint64_t rest = budget - b.chunk_memory_bytes - b.pool_bytes;
  if (d.ranks > 1) {
    const std::uint64_t least_receive = static_cast<std::uint64_t>(d.ranks - 1) * kMinSlotBytes;
    b.receive_bytes = std::clamp(align_down(rest / 2, 64), least_receive,
                                 rest - 2 * b.writer_pairs * kMinPairBufferBytes);
    rest -= b.receive_bytes;
  }
  if (b.writer_pairs > 0) {
    std::uint64_t buffer = std::min(driver::tuning::kMaxBucketBuffer, rest / (2 * b.writer_pairs));
    b.writer_buffer_bytes = buffer >= io::kScratchAlign ? align_down(buffer, io::kScratchAlign) : align_down(buffer, 64);
  }
  return b;
}

}  // namespace extshuffle::mpi
