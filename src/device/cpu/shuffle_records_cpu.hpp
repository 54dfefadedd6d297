// The CPU back end of the bijective shuffle.
#pragma once

#include <cstddef>
#include <span>

#include "extshuffle/device/shuffle_records.hpp"

namespace extshuffle::device::cpu {

// Runs the jobs with OpenMP. Jobs of at least kParallelJobRecords records are
// split across threads one at a time (count pass, prefix sum, gather pass);
// smaller jobs run one per thread. The split points are fixed tiles of the
// domain, so the output is identical for every thread count.
void shuffle_records_cpu(std::span<const ShuffleJob> jobs, std::size_t record_size, int threads);

inline constexpr std::uint64_t kParallelJobRecords = std::uint64_t{1} << 18;

}  // namespace extshuffle::device::cpu
