// The tile agent of the CUDA bijective shuffle (docs/conventions.md, The bijective shuffle; Mitchell et
// al., section 4, Algorithm 1): the bijection as kernel parameters, its
// evaluation, and steps 1-2 of Algorithm 1 on one tile (evaluate f, flag
// f(i) < n, scan the flags, stage the kept source indices in output order).
// The kernels of bijective_shuffle_kernels.cuh run it; the record copiers of
// record_copiers.cuh do step 3. Device helpers only: no buffers, streams or
// error handling here (CUB's agent layer).
//
// Tiles: a tile is kTileItems consecutive domain indices, evaluated by one
// block of kBlockThreads threads holding kItemsPerThread consecutive indices
// each (blocked arrangement, so a thread-order scan is an index-order scan).
#pragma once

#include <cstddef>
#include <cstdint>

#include <cub/block/block_scan.cuh>

#include "extshuffle/core/variable_philox.hpp"

// `#pragma unroll` for loops of functions that are also compiled for the host
// (where GCC would warn about an unknown pragma).
#if defined(__CUDA_ARCH__)
#define EXTSHUFFLE_UNROLL _Pragma("unroll")
#else
#define EXTSHUFFLE_UNROLL
#endif

namespace extshuffle::device::cuda::kernels {

// Tile shape. 256 x 16 keeps the staging buffer of the single-pass kernel at
// 32 KiB of static shared memory and gives each thread 16 independent Philox
// evaluations and 16 loads in flight. Not measured (no GPU): provisional
// until chosen by bench/cuda_shuffle_bench.cu (shuffle_single and
// shuffle_batch lines, one build per shape).
inline constexpr int kBlockThreads = 256;
inline constexpr int kItemsPerThread = 16;
inline constexpr int kTileItems = kBlockThreads * kItemsPerThread;
inline constexpr int kWarpThreads = 32;
// At least two blocks per multiprocessor (at most 128 registers a thread), so
// one block's evaluation overlaps another's gather.
inline constexpr int kMinBlocksPerSm = 2;
inline constexpr int kBlockWarps = kBlockThreads / kWarpThreads;

// Records up to this size are copied by one thread each on the generic path;
// larger ones by a whole warp.
inline constexpr std::size_t kThreadCopyMaxBytes = 32;

// VariablePhilox as plain data: no default member initialisers, so it can
// live in __shared__ memory. Filled from the core class's accessors; the
// rounds themselves are core's (core::VariablePhilox::split/round/join).
struct BijectionParams {
  std::uint32_t keys[core::kVariablePhiloxMaxRounds];
  core::VariablePhilox::Halves halves;
  std::int32_t rounds;
};

__host__ __device__ inline BijectionParams make_bijection_params(const core::VariablePhilox& f) {
  BijectionParams p{};
  for (int r = 0; r < f.rounds(); ++r) p.keys[r] = f.key(r);
  p.halves = f.halves();
  p.rounds = f.rounds();
  return p;
}

__host__ __device__ inline std::uint64_t domain_size(const BijectionParams& f) {
  return std::uint64_t{1} << (f.halves.left_bits + f.halves.right_bits);
}

// values[j] = f(first + j) for j < kItems: core::VariablePhilox::operator()
// with the rounds outermost, so one key load serves all items and the items'
// multiplies overlap. Host and device, so tests/device/cuda_kernel_host_test.cu
// can compare it with core on the CPU.
template <int kItems>
__host__ __device__ __forceinline__ void evaluate_bijection(const BijectionParams& f,
                                                            std::uint64_t first,
                                                            std::uint64_t (&values)[kItems]) {
  using Philox = core::VariablePhilox;
  const Philox::Halves halves = f.halves;  // registers, not shared memory, in the rounds
  std::uint32_t state0[kItems];
  std::uint32_t state1[kItems];
EXTSHUFFLE_UNROLL
  for (int j = 0; j < kItems; ++j) {
    Philox::split(halves, first + static_cast<std::uint64_t>(j), state0[j], state1[j]);
  }
  for (int r = 0; r < f.rounds; ++r) {
    const std::uint32_t key = f.keys[r];
EXTSHUFFLE_UNROLL
    for (int j = 0; j < kItems; ++j) Philox::round(halves, key, state0[j], state1[j]);
  }
EXTSHUFFLE_UNROLL
  for (int j = 0; j < kItems; ++j) values[j] = Philox::join(halves, state0[j], state1[j]);
}

using BlockScanT = cub::BlockScan<std::uint32_t, kBlockThreads, cub::BLOCK_SCAN_WARP_SCANS>;

// Tiles of a domain; the last is partial only when domain < kTileItems.
__host__ __device__ inline std::uint64_t tiles_for_domain(std::uint64_t domain) {
  return (domain + kTileItems - 1) / kTileItems;
}

// Steps 1-2 of Algorithm 1 on one tile: evaluate f on the tile's indices,
// flag f(i) < records, scan the flags in index order (block-wide), and stage
// each kept source index at its rank: sources[rank] = f(i). Returns the
// tile's kept count (in every thread). The caller syncs before reading
// `sources`, and before reusing `scan` or `sources`.
template <class Index>
__device__ __forceinline__ std::uint32_t stage_tile(const BijectionParams& f,
                                                    std::uint64_t tile_first,
                                                    std::uint64_t domain, std::uint64_t records,
                                                    Index* sources,
                                                    typename BlockScanT::TempStorage& scan) {
  const std::uint64_t first =
      tile_first + static_cast<std::uint64_t>(threadIdx.x) * kItemsPerThread;
  std::uint64_t values[kItemsPerThread];
  // Threads wholly past the domain (small jobs) skip the rounds.
  if (first < domain) evaluate_bijection<kItemsPerThread>(f, first, values);
  std::uint32_t kept_mask = 0;
  std::uint32_t kept = 0;
#pragma unroll
  for (int j = 0; j < kItemsPerThread; ++j) {
    const bool keep = first + j < domain && values[j] < records;
    kept_mask |= static_cast<std::uint32_t>(keep) << j;
    kept += keep ? 1u : 0u;
  }
  std::uint32_t rank = 0;
  std::uint32_t tile_kept = 0;
  BlockScanT(scan).ExclusiveSum(kept, rank, tile_kept);
#pragma unroll
  for (int j = 0; j < kItemsPerThread; ++j) {
    if ((kept_mask >> j) & 1u) sources[rank++] = static_cast<Index>(values[j]);
  }
  return tile_kept;
}

}  // namespace extshuffle::device::cuda::kernels
