// --dry-run under MPI: after extshuffle's own plan, what each rank would
// do: its share of the records and of their bytes (the records it holds:
// the top-level chunks it would scatter, or its share of a spread root),
// and the scratch space it would fill.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "extshuffle/ioperm/distributed_walk.hpp"
#include "inputs/distributed_input.hpp"

namespace extshuffle::mpi {

// The scratch bytes this rank fills, at most (docs/mpi.md, "What the
// cluster must provide"): what it was given before the run (exact, as the
// input is prepared before a dry run stops: the compressed files it holds,
// decompressed, and the bytes it received from other ranks' reads or
// copied, State::staged_scratch_bytes), and, for a root scattered by
// chunks, its buckets' regions as `walk` sizes them (the exchanged counts
// unknown: each of the P regions of a bucket rounded up, with its slack),
// twice a bucket larger than `memory_bytes` (its own buckets beside it).
// Position tags of a routed split are not counted.
std::uint64_t scratch_estimate(const DistributedInput::State& in, const ioperm::DistributedWalk& walk,
                               const core::PlanConstants& constants, std::uint64_t memory_bytes);

// "rank R: N records, B bytes", one line a rank, and ", scratch up to S
// bytes" where `scratch_bytes` (one entry a rank) is given.
std::string describe_shares(const DistributedInput::State& in, int ranks,
                            const std::vector<std::uint64_t>& scratch_bytes = {});

}  // namespace extshuffle::mpi
