// The tile agent of the CUDA bijective shuffle (docs/conventions.md, The bijective shuffle; Mitchell et
// al., section 4, Algorithm 1): steps 1-2 of Algorithm 1 on one tile
// (evaluate f, flag f(i) < n, scan the flags, stage the kept source indices
// in output order). The bijection as kernel parameters, its evaluation and
// the tile shape are in bijection_params.hpp (plain C++, host and device).
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

#include "device/cuda/bijection_params.hpp"

namespace extshuffle::device::cuda::kernels {

inline constexpr int kWarpThreads = 32;
// At least two blocks per multiprocessor (at most 128 registers a thread), so
// one block's evaluation overlaps another's gather.
inline constexpr int kMinBlocksPerSm = 2;
inline constexpr int kBlockWarps = kBlockThreads / kWarpThreads;

// Records up to this size are copied by one thread each on the generic path;
// larger ones by a whole warp.
inline constexpr std::size_t kThreadCopyMaxBytes = 32;

using BlockScanT = cub::BlockScan<std::uint32_t, kBlockThreads, cub::BLOCK_SCAN_WARP_SCANS>;

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
