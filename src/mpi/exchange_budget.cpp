#include "exchange_budget.hpp"

#include <algorithm>
#include <optional>

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

// The pool that holds what one round scatters to other ranks (at most
// `round_bytes`), with one block of slack per such bucket.
void size_pool(ExchangeBudget& b, std::uint64_t round_bytes, std::uint64_t remote) {
  b.block_bytes = b.pool_bytes = 0;
  if (remote == 0) return;
  b.block_bytes = std::clamp(align_down(b.chunk_memory_bytes / (4 * remote), 64), kMinBlockBytes, kMaxBlockBytes);
  b.pool_bytes = round_bytes + remote * b.block_bytes;
}

}  // namespace

std::optional<ExchangeBudget> plan_exchange_budget(const ioperm::DistributedWalk& walk, const Distribution& d, int rank,
                                                   std::uint64_t budget, const ioperm::NodeFacts& root,
                                                   ioperm::NodePath path) {
  ExchangeBudget b;
  const std::uint64_t own = d.end_bucket(rank) - d.first_bucket(rank), remote = d.buckets - own;
  b.writer_pairs = ReceivedBuckets::pairs(d, rank);
  const std::uint64_t least_rest =
      (d.ranks > 1 ? static_cast<std::uint64_t>(d.ranks - 1) * kMinSlotBytes : 0) + 2 * b.writer_pairs * kMinPairBufferBytes;
  // What the receive and write buffers should keep at least: a quarter of
  // the budget when there are other ranks (fewer sub-rounds, larger writes).
  const std::uint64_t fair_rest = d.ranks > 1 ? std::max(least_rest, budget / 4) : least_rest;
  // The scatter walk's budget: the largest arena of these whose chunk
  // memory (on `path`), pool and least buffers fit, preferring one that
  // leaves the buffers their fair quarter. Alone (P = 1, no pool) the walk
  // gets what a split of the whole budget gets, as on one machine.
  struct Choice {
    ExchangeBudget budget;
    bool fair = false;
  };
  std::optional<Choice> best;
  for (const std::uint64_t arena : {budget / 2, budget / 8 * 5, budget / 3 * 2, budget / 4 * 3, budget / 8 * 7, budget}) {
    const auto share = walk.scatter_memory(root, d.buckets, path, arena);
    if (!share) continue;
    Choice c{b};
    c.budget.scatter_arena_bytes = arena;
    c.budget.chunk_memory_bytes = share->chunk_memory_bytes;
    size_pool(c.budget, share->round_bytes, remote);
    const std::uint64_t taken = c.budget.chunk_memory_bytes + c.budget.pool_bytes;
    if (taken + least_rest > budget) continue;
    c.fair = taken + fair_rest <= budget;
    // Fair buffers first; later candidates are larger.
    if (!best || c.fair >= best->fair) best = c;
  }
  if (!best) return std::nullopt;
  b = best->budget;
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
    std::uint64_t buffer = std::min(ioperm::max_bucket_buffer_bytes(), rest / (2 * b.writer_pairs));
    b.writer_buffer_bytes = buffer >= io::kScratchAlign ? align_down(buffer, io::kScratchAlign) : align_down(buffer, 64);
  }
  return b;
}

}  // namespace extshuffle::mpi
