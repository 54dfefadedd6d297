// The CPU back end of the bijective shuffle.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "record_gather.hpp"
#include "variable_philox_batch.hpp"

#include "extshuffle/device/shuffle_records.hpp"

namespace extshuffle::device::cpu {

// How the gathers run; the defaults are the tuned ones, the benchmark
// (bench/gather_bench.cpp) sets others to compare.
struct GatherTuning {
  std::uint32_t prefetch_records = kGatherPrefetchRecords;  // 0: no prefetch
  std::uint32_t batch_records = kPhiloxBatch;               // values of f evaluated at a time, at most kPhiloxBatch
};

// Runs the jobs with OpenMP, in pieces that threads take in turn: a job
// whose domain has no index to drop is cut into fixed tiles; a job with
// indices to drop is one piece, or, when there are fewer jobs than threads
// and it has at least kParallelJobRecords records, tiles whose output
// offsets a count pass finds. The tiles are fixed, so the output is identical
// for every thread count.
void shuffle_records_cpu(std::span<const ShuffleJob> jobs, std::size_t record_size, int threads,
                         const GatherTuning& tuning = {});

inline constexpr std::uint64_t kParallelJobRecords = std::uint64_t{1} << 18;

}  // namespace extshuffle::device::cpu
