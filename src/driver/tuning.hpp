// Every tuning knob of the driver in one place. None of them changes the
// output (the plan fixes the permutation); they decide how memory is carved
// and how work is batched. Each names the measurement that chose it; "not
// measured" says so where nothing did, so a later benchmark knows what is
// free to move.
#pragma once

#include <cstdint>

namespace extshuffle::driver::tuning {

inline constexpr std::uint64_t kKiB = std::uint64_t{1} << 10;
inline constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;

// Streaming split: at most this many chunks are read, shuffled and scattered
// as one batch. Fixed-size records used 16 and text 8 with no reason given;
// both now use 16. Text groups are bounded sooner by their index arrays (8
// bytes a record: 8 chunks at -S 512M), so at the suite's budgets nothing
// changes (bench/suite.sh, docs/benchmarks.md "before and after one driver").
inline constexpr std::uint64_t kMaxChunkGroup = 16;

// Bucket write buffers: two per bucket, at most this large each. Larger ones
// gain nothing measurable (bench/external_bench.sh, docs/benchmarks.md).
inline constexpr std::uint64_t kMaxBucketBuffer = 8 * kMiB;

// Below this many bytes an in-RAM scatter runs on one thread: waking the
// others costs more than the copy (not measured beyond bench/suite.sh).
inline constexpr std::uint64_t kParallelScatterBytes = 4 * kMiB;

// Text in RAM: records gathered per parallel step of the output. Each step
// ends in a barrier, which costs a scheduler time slice on a busy machine,
// so steps are large; below kParallelGatherMin records one thread gathers.
// A 2048th of the budget goes to the batch's offsets (bench/suite.sh, 1 GiB
// of lines in RAM).
inline constexpr std::uint64_t kParallelGatherMin = 32768;
inline constexpr std::uint64_t kGatherBatchBudgetDivisor = 2048;
inline constexpr std::uint64_t kMinGatherBatchRecords = 1024;
inline constexpr std::uint64_t kMaxGatherBatchRecords = std::uint64_t{1} << 18;

// Text output staging: a 16th of the budget, between these bounds.
inline constexpr std::uint64_t kMinStagingBytes = 4 * kKiB;
inline constexpr std::uint64_t kMaxStagingBytes = 64 * kMiB;

// Text streaming: the smallest chunk space worth streaming through, and the
// largest (record offsets within a chunk are 32-bit).
inline constexpr std::uint64_t kMinChunkSpace = 256 * kKiB;
inline constexpr std::uint64_t kMaxChunkSpace = (std::uint64_t{4} << 30) - 4096;

// Text buckets: a region of the bucket's expected bytes plus a 32nd and
// 64 KiB; beyond that, overflow extents. A bucket is a uniform sample of its
// node's records (Gustedt, section 3), so its size deviates by about the
// record sizes' relative spread / sqrt(records): this covers that except for
// inputs of a few enormous records (docs/design.md, "bucket regions").
inline constexpr std::uint64_t kRegionSlackDivisor = 32;
inline constexpr std::uint64_t kRegionSlackBytes = 64 * kKiB;

// Windowed gathers read the chunk in pieces of at most this many bytes (not
// measured: the path is bounded by its passes, not its piece size).
inline constexpr std::uint64_t kGatherPieceBytes = 16 * kMiB;

// Buckets read back: consecutive small buckets share one read of at most a
// third of the budget, the next group read while this one is shuffled
// (bench/suite.sh, 8 GiB of 8-byte records at -S 512M).
inline constexpr std::uint64_t kBucketGroupBudgetDivisor = 3;

}  // namespace extshuffle::driver::tuning
