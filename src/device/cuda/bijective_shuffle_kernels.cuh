// Kernels of the CUDA bijective shuffle (docs/conventions.md, The bijective shuffle; Mitchell et al.,
// section 4, Algorithm 1 in its fused "Bijective2" form, section 6).
//
// Kernels only, in the style of CUB: the tile agent (bijection_tiles.cuh)
// evaluates and compacts a tile, a copier (record_copiers.cuh) moves its
// records; kernel_launch.cu picks the kernel and launches it, and
// bench/cuda_shuffle_bench.cu launches the same kernels on resident data.
// Every kernel writes output[j] = input[f(i_j)], where i_0 < i_1 < ... are the
// domain indices with f(i) < records: byte for byte what the CPU back end
// (src/device/cpu/) writes.
//  - shuffle_tiles_kernel (the single-pass kernel; one job or many): one
//    block per tile of the jobs' domains laid end to end, tile order taken
//    from an atomic counter so a tile only ever waits on tiles that are
//    already running; a tile's output offset within its job comes from a
//    single-pass decoupled look-back (Merrill and Garland, via
//    cub::TilePrefixCallbackOp). A job's first tile publishes its count as an
//    inclusive prefix, so no look-back crosses into the job before it.
//  - shuffle_batch_kernel (many small jobs): one block per job walks the
//    job's tiles in order with a running offset, so the scan never leaves
//    the block.
// In both, a tile's kept source indices are staged in shared memory in output
// order, then the records are gathered: random reads, coalesced writes.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cub/agent/single_pass_scan_operators.cuh>
#include <cuda/std/functional>

#include "device/cuda/bijection_tiles.cuh"
#include "device/cuda/record_copiers.cuh"

namespace extshuffle::device::cuda::kernels {

// Look-back state of the single-pass kernel: one descriptor per tile holding
// the tile's kept count (64-bit: a job may keep more than 2^32 records).
using TileStateT = cub::ScanTileState<unsigned long long>;
using TilePrefixT =
    cub::TilePrefixCallbackOp<unsigned long long, ::cuda::std::plus<unsigned long long>, TileStateT>;

// One job of a launch. Offsets are in bytes from the launch's base pointers
// (input and output share one layout).
struct KernelJob {
  BijectionParams f;
  std::uint64_t records;
  std::uint64_t offset_bytes;
};

// Resets the look-back descriptors and the tile counter. Grid: at least
// ceil(num_tiles / blockDim.x) blocks of at least 32 threads. (A template, as
// every kernel here, so that the header can be included by several programs.)
template <class TileState = TileStateT>
__global__ void init_lookback_kernel(TileState tile_state, int num_tiles,
                                     unsigned int* tile_counter) {
  tile_state.InitializeStatus(num_tiles);
  if (blockIdx.x == 0 && threadIdx.x == 0) *tile_counter = 0;
}

// The single-pass kernel. Grid: first_tiles[jobs] blocks of kBlockThreads
// (the jobs' tiles_for_domain summed, at most INT_MAX), after
// init_lookback_kernel on the same state and counter. first_tiles[j] is the
// first global tile of job j; jobs[j].records > 0.
template <class Records>
__global__ void __launch_bounds__(kBlockThreads, kMinBlocksPerSm)
    shuffle_tiles_kernel(const KernelJob* jobs, const std::uint64_t* first_tiles,
                         std::uint32_t job_count, const std::byte* input, std::byte* output,
                         Records copier, TileStateT tile_state, unsigned int* tile_counter) {
  __shared__ BijectionParams s_f;
  __shared__ typename BlockScanT::TempStorage s_scan;
  __shared__ typename TilePrefixT::TempStorage s_prefix_storage;
  __shared__ std::uint64_t s_sources[kTileItems];
  __shared__ unsigned int s_tile;
  __shared__ std::uint64_t s_job_tile;  // the tile's index within its job
  __shared__ std::uint64_t s_records;
  __shared__ std::uint64_t s_offset;
  __shared__ unsigned long long s_out_first;

  // 1. Take the next tile in start order (so look-back never waits on a
  //    tile that has not started), find its job and load the job.
  if (threadIdx.x == 0) {
    const unsigned int tile = atomicAdd(tile_counter, 1u);
    const std::uint32_t j = job_of_tile(first_tiles, job_count, tile);
    s_tile = tile;
    s_job_tile = tile - first_tiles[j];
    s_f = jobs[j].f;
    s_records = jobs[j].records;
    s_offset = jobs[j].offset_bytes;
  }
  __syncthreads();
  const int tile = static_cast<int>(s_tile);
  const std::uint64_t job_tile = s_job_tile;
  const std::uint64_t domain = domain_size(s_f);
  const std::byte* in = input + s_offset;
  std::byte* out = output + s_offset;

  // 2. Evaluate, flag, scan within the tile, stage the kept sources.
  const std::uint32_t tile_kept =
      stage_tile<std::uint64_t>(s_f, job_tile * kTileItems, domain, s_records, s_sources, s_scan);
  // Publish the tile's count at once so successors can look back past it;
  // a job's first tile is its own inclusive prefix.
  if (threadIdx.x == 0) {
    if (job_tile == 0) {
      tile_state.SetInclusive(tile, tile_kept);
      s_out_first = 0;
    } else {
      tile_state.SetPartial(tile, tile_kept);
    }
  }
  __syncthreads();

  // 3. Random reads first; warp 0 meanwhile finds the tile's output offset
  //    by decoupled look-back over its predecessors' descriptors.
  typename Records::Held held;
  copier.load(held, s_sources, tile_kept, in);
  if (job_tile != 0 && threadIdx.x < kWarpThreads) {
    TilePrefixT prefix(tile_state, s_prefix_storage, ::cuda::std::plus<unsigned long long>{},
                       tile);
    const unsigned long long out_first = prefix(tile_kept);
    if (threadIdx.x == 0) s_out_first = out_first;
  }
  __syncthreads();

  // 4. Write the tile's records to their output slots.
  copier.store(held, s_sources, tile_kept, in, out, s_out_first);
}

// The batched kernel: block b shuffles jobs[b]. Each job's domain must be at
// most 2^32 (sources are staged as 32-bit indices), and its records > 0. The
// block walks the job's tiles in index order with a running output offset
// and stops once all records are placed.
template <class Records>
__global__ void __launch_bounds__(kBlockThreads, kMinBlocksPerSm)
    shuffle_batch_kernel(const KernelJob* jobs, const std::byte* input, std::byte* output,
                         Records copier) {
  __shared__ BijectionParams s_f;
  __shared__ typename BlockScanT::TempStorage s_scan;
  __shared__ std::uint32_t s_sources[kTileItems];
  __shared__ std::uint64_t s_records;
  __shared__ std::uint64_t s_offset;

  // 1. Load this block's job.
  if (threadIdx.x == 0) {
    const KernelJob& job = jobs[blockIdx.x];
    s_f = job.f;
    s_records = job.records;
    s_offset = job.offset_bytes;
  }
  __syncthreads();
  const std::uint64_t records = s_records;
  const std::uint64_t domain = domain_size(s_f);
  const std::byte* in = input + s_offset;
  std::byte* out = output + s_offset;

  // 2. Tiles in order: evaluate, scan, stage, gather at the running offset.
  std::uint64_t placed = 0;
  for (std::uint64_t tile_first = 0; tile_first < domain; tile_first += kTileItems) {
    const std::uint32_t tile_kept =
        stage_tile<std::uint32_t>(s_f, tile_first, domain, records, s_sources, s_scan);
    __syncthreads();
    typename Records::Held held;
    copier.load(held, s_sources, tile_kept, in);
    copier.store(held, s_sources, tile_kept, in, out, placed);
    placed += tile_kept;
    if (placed >= records) break;  // the remaining tiles keep nothing
    __syncthreads();               // s_sources and s_scan are reused
  }
}

}  // namespace extshuffle::device::cuda::kernels
