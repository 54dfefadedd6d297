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

}  // namespace

ExchangeBudget plan_exchange_budget(const driver::RecordLayout& layout, const Distribution& d, int rank,
                                    std::uint64_t budget) {
  ExchangeBudget b;
  const std::uint64_t own = d.end_bucket(rank) - d.first_bucket(rank), remote = d.buckets - own;
  // Half the budget is the scatter walk's; its chunk memory is what the
  // driver's rule gives a split of that budget (about a quarter of -S).
  // Near the layout's smallest budget, two thirds (a third of -S).
  for (const std::uint64_t arena : {budget / 2, budget / 3 * 2}) {
    try {
      b.chunk_memory_bytes = layout.split_layout(d.buckets, arena).chunk_memory_bytes;
      b.scatter_arena_bytes = arena;
      break;
    } catch (const BudgetError&) {
      if (arena != budget / 2) throw;
    }
  }
  // The pool holds what one group of chunks (at most the chunk memory)
  // scatters to other ranks, with one block of slack per bucket.
  if (remote > 0) {
    b.block_bytes = std::clamp(align_down(b.chunk_memory_bytes / (4 * remote), 64), kMinBlockBytes, kMaxBlockBytes);
    b.pool_bytes = b.chunk_memory_bytes + remote * b.block_bytes;
  }
  const std::uint64_t taken = b.chunk_memory_bytes + b.pool_bytes;
  const auto too_small = [&] {
    return BudgetError("--memory too small for " + std::to_string(d.ranks) + " ranks: " + std::to_string(budget) +
                       " bytes cannot hold a chunk group, its slices for other ranks and a buffer per rank and bucket");
  };
  if (taken >= budget) throw too_small();
  std::uint64_t rest = budget - taken;
  // The rest: one half receives a sub-round (a slot per other rank), the
  // other half buffers the writes of the (source, bucket) pairs.
  if (d.ranks > 1) {
    b.receive_bytes = align_down(rest / 2, 64);
    if (b.receive_bytes / static_cast<std::uint64_t>(d.ranks - 1) < 64) throw too_small();
    rest -= b.receive_bytes;
  }
  b.writer_pairs = ReceivedBuckets::pairs(d, rank);
  if (b.writer_pairs > 0) {
    std::uint64_t buffer = std::min(driver::tuning::kMaxBucketBuffer, rest / (2 * b.writer_pairs));
    buffer = buffer >= io::kScratchAlign ? align_down(buffer, io::kScratchAlign) : align_down(buffer, 64);
    if (buffer == 0) throw too_small();
    b.writer_buffer_bytes = buffer;
  }
  return b;
}

}  // namespace extshuffle::mpi
