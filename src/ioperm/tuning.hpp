// Every tuning knob of the walk in one place. None of them changes the
// output (the plan fixes the permutation); they decide how memory is carved
// and how work is batched. Each names the measurement that chose it; "not
// measured" says so where nothing did, so a later benchmark knows what is
// free to move.
#pragma once

#include <cstdint>

namespace extshuffle::ioperm::tuning {

inline constexpr std::uint64_t kKiB = std::uint64_t{1} << 10;
inline constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;

// Streaming split: at most this many chunks are read, shuffled and scattered
// as one batch: one parallel batch a group keeps every thread busy and
// amortises the wait for the group's rows. One value for both layouts: text
// groups are bounded sooner by their index arrays (8 bytes a record: 8
// chunks at -S 512M), so at the suite's budgets 8 and 16 run alike
// (bench/suite.sh, docs/benchmarks.md "Before and after the one driver").
inline constexpr std::uint64_t kMaxChunkGroup = 16;

// Bucket write buffers: two per bucket, at most this large each. Larger ones
// gain nothing measurable (bench/external_bench.sh, docs/benchmarks.md).
inline constexpr std::uint64_t kMaxBucketBuffer = 8 * kMiB;

// In RAM, chunks of at most this many bytes (8-byte records at L = 2^20)
// are shuffled in place in batches of one a thread, in a chunk buffer and a
// file source's two read buffers: 48 MiB at 2 threads, a 20th of a 1 GiB
// node (two a thread, 96 MiB, took a 256 MiB node to 1.35 times its size
// in peak RSS and was no faster). Larger records move through index
// permutations instead: read a chunk at a time where a chunk fits beside
// the node (16- and 32-byte records: docs/benchmarks.md, "32-byte records
// in RAM"), else placed one by one with no chunk-sized copy
// (bench/suite.sh, fixed8_1g and fixed4k cases).
inline constexpr std::uint64_t kMaxShuffledChunkBytes = 8 * kMiB;

// In RAM, a node is held once: beside its records the run may use at most
// the larger of kInRamWorkspaceBytes and a kInRamWorkspaceDivisor-th of
// them (batches of chunks, read buffers, index permutations, staging), so
// that peak RSS stays within 1.1 times the input plus 64 MiB at every
// budget that holds it (tests/reliability/in_ram_rss_test.cpp). 48 MiB is
// what 8-byte records took at 2 threads before the cap (the batch of one
// chunk a thread above); more threads get fewer chunks a batch rather than
// more memory. A way that needs more (a leaf of 512-byte rows shuffled into
// a copy of itself) gives way to one through index permutations, which was
// also the faster (512 MiB .npy: 0.63-0.70 s against 0.99 s warm,
// bench/suite.sh, npy512 case).
inline constexpr std::uint64_t kInRamWorkspaceBytes = 48 * kMiB;
inline constexpr std::uint64_t kInRamWorkspaceDivisor = 16;
// Index mode: records gathered through a permutation are staged this many
// bytes at a time before they are handed on (not measured).
inline constexpr std::uint64_t kIndexStagingBytes = 4 * kMiB;

// Below this many bytes an in-RAM scatter runs on one thread: waking the
// others costs more than the copy (not measured beyond bench/suite.sh).
inline constexpr std::uint64_t kParallelScatterBytes = 4 * kMiB;

// Index mode: records gathered through a permutation go out in pieces of
// this many bytes that threads take in turn, so that they finish together
// (not measured: a piece is far longer than taking it costs).
inline constexpr std::uint64_t kGatherPieceBytes = 256 * kKiB;

// Text in RAM: records gathered per parallel step of the output. Each step
// ends in a barrier, which costs a scheduler time slice on a busy machine,
// so steps are large; below kParallelGatherMin records one thread gathers.
// A 2048th of the budget goes to the batch's offsets (bench/suite.sh, 1 GiB
// of lines in RAM).
inline constexpr std::uint64_t kParallelGatherMin = 32768;
inline constexpr std::uint64_t kGatherBatchBudgetDivisor = 2048;
inline constexpr std::uint64_t kMinGatherBatchRecords = 1024;
inline constexpr std::uint64_t kMaxGatherBatchRecords = std::uint64_t{1} << 18;

// Text output staging: a 16th of the budget, between these bounds. 16 MiB
// rather than 4 or 1: 2 GiB of JSONL in RAM took 4.4, 4.7 and 5.3 s (the
// parallel gather's per-batch cost); 64 MiB took an in-RAM run of
// 250 MB of JSONL at -S 1G to 1.4 times the input in peak RSS for no gain
// in time (bench/suite.sh, jsonl_heavy in RAM).
inline constexpr std::uint64_t kMinStagingBytes = 4 * kKiB;
inline constexpr std::uint64_t kMaxStagingBytes = 16 * kMiB;

// Text streaming: the smallest chunk space worth streaming through, and the
// largest (record offsets within a chunk are 32-bit).
inline constexpr std::uint64_t kMinChunkSpace = 256 * kKiB;
inline constexpr std::uint64_t kMaxChunkSpace = (std::uint64_t{4} << 30) - 4096;

// Text buckets: a region of the bucket's expected bytes plus a 32nd and
// 64 KiB; beyond that, overflow extents. A bucket is a uniform sample of its
// node's records (Gustedt, section 3), so its size deviates by about the
// record sizes' relative spread / sqrt(records): this covers that except for
// inputs of a few enormous records (docs/design.md, "Buckets").
inline constexpr std::uint64_t kRegionSlackDivisor = 32;
inline constexpr std::uint64_t kRegionSlackBytes = 64 * kKiB;

// Records routed one by one (a routed split, a leaf in windows, a node
// placed in RAM) are read through a record stream (record_stream.hpp): a
// space of at least kMinStreamSpace (the largest record must fit in it) and
// at most kMaxStreamSpace, read ahead while the last batch is routed, and
// batches of kMinRouteBatch to kMaxRouteBatch records. Placement in RAM
// reads through kPlacementStreamSpace in batches of kPlacementBatch. Not
// measured beyond bench/suite.sh (the jsonl_heavy and fixed4k cases): the
// routed paths are bound by their IO.
inline constexpr std::uint64_t kMinStreamSpace = 256 * kKiB;
// ...but a space only as large as the longest record and its tag is
// accepted down to kMinStreamFloor, so that small budgets still run.
inline constexpr std::uint64_t kMinStreamFloor = 1 * kKiB;
inline constexpr std::uint64_t kMaxStreamSpace = 64 * kMiB;
inline constexpr std::uint64_t kMinRouteBatch = 16;
inline constexpr std::uint64_t kMaxRouteBatch = 65536;
inline constexpr std::uint64_t kPlacementStreamSpace = 8 * kMiB;
inline constexpr std::uint64_t kPlacementBatch = 16384;

// The smallest write buffer of a bucket or window a budget may be cut
// into (two each): tiny budgets get slow writes rather than a refusal.
inline constexpr std::uint64_t kMinBucketBufferBytes = 256;

// Buckets read back: consecutive small buckets share one read of at most a
// third of the budget, the next group read while this one is shuffled
// (bench/suite.sh, 8 GiB of 8-byte records at -S 512M).
inline constexpr std::uint64_t kBucketGroupBudgetDivisor = 3;

}  // namespace extshuffle::ioperm::tuning
