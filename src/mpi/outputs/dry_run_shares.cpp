#include "dry_run_shares.hpp"

#include <algorithm>

#include "distribution.hpp"
#include "extshuffle/io/bucket_store.hpp"

namespace extshuffle::mpi {

std::uint64_t scratch_estimate(const DistributedInput::State& in, const ioperm::DistributedWalk& walk,
                               const core::PlanConstants& constants, std::uint64_t memory_bytes) {
  std::uint64_t bytes = in.staged_scratch_bytes();
  if (in.ranks == 1 || spread_root(in.records, constants, in.ranks)) return bytes;  // no buckets of its own
  // Bucket j's P regions, one a rank that sends to it (distribution.cpp:
  // rank r owns buckets [p r / P, p (r + 1) / P)).
  const std::uint64_t n = in.records, data = in.data_bytes(), p = core::bucket_count(n, constants);
  const auto ranks = static_cast<std::uint64_t>(in.ranks);
  const std::uint64_t first = range_begin(p, in.rank, in.ranks), end = range_begin(p, in.rank + 1, in.ranks);
  const std::uint64_t per_region = walk.bucket_region_bytes(data, n, 0, 0) + io::kScratchAlign;
  for (std::uint64_t j = first; j < end; ++j) {
    const std::uint64_t bucket = walk.bucket_region_bytes(data, n, core::bucket_records(n, p, j), 0) +
                                 io::kScratchAlign + (ranks - 1) * per_region;
    bytes += bucket > memory_bytes ? 2 * bucket : bucket;
  }
  return bytes;
}

std::string describe_shares(const DistributedInput::State& in, int ranks,
                            const std::vector<std::uint64_t>& scratch_bytes) {
  std::string text;
  for (int q = 0; q < ranks; ++q) {
    // The records each rank holds: its chunks, or its 1/P of a spread
    // root's bytes (docs/mpi.md, "How the work is shared").
    const std::uint64_t records = in.held_begin[q + 1] - in.held_begin[q];
    const std::uint64_t bytes =
        in.framed ? in.held_byte_begin[q + 1] - in.held_byte_begin[q] : records * in.record_size;
    text +=
        "rank " + std::to_string(q) + ": " + std::to_string(records) + " records, " + std::to_string(bytes) + " bytes";
    if (!scratch_bytes.empty()) text += ", scratch up to " + std::to_string(scratch_bytes[q]) + " bytes";
    text += "\n";
  }
  return text;
}

}  // namespace extshuffle::mpi
