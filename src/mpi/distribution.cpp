#include "distribution.hpp"

#include <algorithm>

namespace extshuffle::mpi {

int Distribution::owner(std::uint64_t bucket) const {
  const auto after = std::upper_bound(bucket_begin.begin(), bucket_begin.end(), bucket);
  return static_cast<int>(after - bucket_begin.begin()) - 1;
}

std::uint64_t range_begin(std::uint64_t count, int rank, int ranks) {
  return static_cast<std::uint64_t>(static_cast<unsigned __int128>(count) * static_cast<unsigned>(rank) /
                                    static_cast<unsigned>(ranks));
}

std::vector<std::uint64_t> even_split(std::uint64_t count, int ranks) {
  std::vector<std::uint64_t> begin(ranks + 1);
  for (int r = 0; r <= ranks; ++r) begin[r] = range_begin(count, r, ranks);
  return begin;
}

std::vector<std::uint64_t> chunk_first_records(const std::vector<std::uint64_t>& chunk_begin, std::uint64_t records,
                                               const core::PlanConstants& constants) {
  const std::size_t ranks = chunk_begin.size() - 1;
  std::vector<std::uint64_t> held(ranks + 1);
  for (std::size_t r = 0; r < ranks; ++r) held[r] = std::min(records, core::chunk_first(chunk_begin[r], constants));
  held[ranks] = records;
  return held;
}

bool spread_root(std::uint64_t records, const core::PlanConstants& constants, int ranks) {
  if (ranks <= 1) return false;
  if (core::is_leaf(records, constants)) return true;
  return core::plan_levels(records, constants) == 2 &&
         core::chunk_count(records, constants) < kSpreadChunksPerRank * static_cast<std::uint64_t>(ranks);
}

bool runs_alone(std::uint64_t records, const core::PlanConstants& constants, int ranks) {
  return ranks == 1 && core::is_leaf(records, constants);
}

std::vector<std::uint64_t> held_record_split(std::uint64_t records, const core::PlanConstants& constants, int ranks) {
  if (!spread_root(records, constants, ranks)) {
    return chunk_first_records(even_split(core::chunk_count(records, constants), ranks), records, constants);
  }
  return even_split(records, ranks);
}

void range_column_sums(core::RecursiveMatrix& matrix, std::uint64_t first, std::uint64_t end,
                       std::span<std::uint64_t> out) {
  std::vector<std::uint64_t> before_first(out.size());
  matrix.column_sums_before(first, before_first);
  matrix.column_sums_before(end, out);
  for (std::size_t j = 0; j < out.size(); ++j) out[j] -= before_first[j];
}

Distribution distribute(std::uint64_t seed, std::uint64_t records, const core::PlanConstants& constants,
                        std::vector<std::uint64_t> chunk_begin, Communicator& comm) {
  Distribution d;
  d.root = core::Node{core::NodeId{0, 0}, records};
  d.chunks = core::chunk_count(records, constants);
  d.buckets = core::bucket_count(records, constants);
  d.ranks = comm.size();
  d.chunk_begin = std::move(chunk_begin);
  // Each rank owns 1/P of the buckets, whatever its chunks: a bucket takes
  // about 1/p of every chunk's records, a random sample of them, so its
  // bytes are about 1/p of the data's however the records' sizes drift
  // along the input, and even shares of the buckets are even shares of the
  // bytes written (docs/mpi.md, "How the work is shared"), while the
  // chunks are shared by their bytes read. A rank still keeps about 1/P of
  // its own records, so the bytes sent stay at the data times (P - 1) / P.
  d.bucket_begin = even_split(d.buckets, d.ranks);
  // The counts first (ParPerm's matrix, summed over each rank's rows).
  std::vector<std::uint64_t> mine(d.buckets, 0);
  const std::uint64_t first = d.chunk_begin[comm.rank()], end = d.chunk_begin[comm.rank() + 1];
  if (first < end) {
    core::RecursiveMatrix matrix(seed, d.root.id, records, constants);
    range_column_sums(matrix, first, end, mine);
    d.splits_drawn = matrix.splits_drawn();
  }
  d.sent = comm.all_gather(mine);
  return d;
}

}  // namespace extshuffle::mpi
