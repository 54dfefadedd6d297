// Kernels of the CUDA bijective shuffle (DESIGN.md 2.2; Mitchell et al.,
// section 4, Algorithm 1 in its fused "Bijective2" form, section 6).
//
// Kernels and their device helpers only, in the style of CUB's agents: no
// buffers, streams or error handling here. cuda_backend.cu owns those, and
// bench/cuda_shuffle_bench.cu launches the same kernels on resident data.
// Every kernel writes output[j] = input[f(i_j)], where i_0 < i_1 < ... are the
// domain indices with f(i) < records: byte for byte what the CPU back end
// (src/device/cpu/) writes.
//
// Tiles: a tile is kTileItems consecutive domain indices, evaluated by one
// block of kBlockThreads threads holding kItemsPerThread consecutive indices
// each (blocked arrangement, so a thread-order scan is an index-order scan).
//  - shuffle_single_kernel (one large job): one block per tile, tile order
//    taken from an atomic counter so a tile only ever waits on tiles that are
//    already running; the tile's output offset comes from a single-pass
//    decoupled look-back (Merrill and Garland, via cub::TilePrefixCallbackOp).
//  - shuffle_batch_kernel (many jobs, each with its own key and offset): one
//    block per job walks the job's tiles in order with a running offset, so
//    the scan never leaves the block.
// In both, a tile's kept source indices are staged in shared memory in output
// order, then the records are gathered: random reads, coalesced writes.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cub/agent/single_pass_scan_operators.cuh>
#include <cub/block/block_scan.cuh>
#include <cuda/std/functional>
#include <vector_types.h>

#include "extshuffle/core/variable_philox.hpp"

// `#pragma unroll` for loops of functions that are also compiled for the host
// (where GCC would warn about an unknown pragma).
#if defined(__CUDA_ARCH__)
#define EXTSHUFFLE_UNROLL _Pragma("unroll")
#else
#define EXTSHUFFLE_UNROLL
#endif

namespace extshuffle::device::cuda::kernels {

// Tile shape. 256 x 16 keeps the staging buffer of kernel (a) at 32 KiB of
// static shared memory and gives each thread 16 independent Philox
// evaluations and 16 loads in flight. Provisional until chosen by
// bench/cuda_shuffle_bench.cu (shuffle_single / shuffle_batch lines).
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

// Look-back state of kernel (a): one descriptor per tile holding the tile's
// kept count (64-bit: a job may keep more than 2^32 records).
using TileStateT = cub::ScanTileState<unsigned long long>;
using TilePrefixT =
    cub::TilePrefixCallbackOp<unsigned long long, ::cuda::std::plus<unsigned long long>, TileStateT>;

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

// Step 3, records of sizeof(T) bytes (1, 2, 4, 8, 16) moved as single loads
// and stores; T = uint4 gives 16-byte vector accesses. Output rank r of the
// tile is handled by thread r % kBlockThreads, so each store instruction of a
// warp writes consecutive records. load() issues all random reads before
// store() writes, so they are in flight together (and, in kernel (a), during
// the look-back). `input`/`output` must be aligned to sizeof(T).
template <class T>
struct TypedRecords {
  static_assert(sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8 ||
                sizeof(T) == 16);
  struct Held {
    T values[kItemsPerThread];
  };

  __host__ __device__ std::size_t record_bytes() const { return sizeof(T); }

  template <class Index>
  __device__ __forceinline__ void load(Held& held, const Index* sources, std::uint32_t tile_kept,
                                       const std::byte* input) const {
    const T* in = reinterpret_cast<const T*>(input);
#pragma unroll
    for (int j = 0; j < kItemsPerThread; ++j) {
      const std::uint32_t r = static_cast<std::uint32_t>(j * kBlockThreads) + threadIdx.x;
      if (r < tile_kept) held.values[j] = __ldg(in + sources[r]);
    }
  }

  template <class Index>
  __device__ __forceinline__ void store(const Held& held, const Index*, std::uint32_t tile_kept,
                                        const std::byte*, std::byte* output,
                                        std::uint64_t out_first) const {
    T* out = reinterpret_cast<T*>(output) + out_first;
#pragma unroll
    for (int j = 0; j < kItemsPerThread; ++j) {
      const std::uint32_t r = static_cast<std::uint32_t>(j * kBlockThreads) + threadIdx.x;
      if (r < tile_kept) out[r] = held.values[j];
    }
  }
};

// Copies words first_word, first_word + word_step, ... of a record of
// `bytes` bytes as words of type W (both pointers aligned to W), up to kBatch
// loads in flight before their stores.
template <class W, int kBatch>
__device__ __forceinline__ void copy_words(std::byte* __restrict__ to,
                                           const std::byte* __restrict__ from, std::size_t bytes,
                                           unsigned first_word, unsigned word_step) {
  const W* src = reinterpret_cast<const W*>(from);
  W* dst = reinterpret_cast<W*>(to);
  const std::size_t words = bytes / sizeof(W);
  for (std::size_t w = first_word; w < words; w += std::size_t{kBatch} * word_step) {
    W held[kBatch];
#pragma unroll
    for (int b = 0; b < kBatch; ++b) {
      const std::size_t at = w + static_cast<std::size_t>(b) * word_step;
      if (at < words) held[b] = __ldg(src + at);
    }
#pragma unroll
    for (int b = 0; b < kBatch; ++b) {
      const std::size_t at = w + static_cast<std::size_t>(b) * word_step;
      if (at < words) dst[at] = held[b];
    }
  }
}

// Step 3 for any other record size: small records one per thread (4-byte
// words when the size allows, else bytes), large ones one per warp with the
// lanes striding over the record (16-byte, 4-byte or 1-byte words). Base
// pointers must be 16-byte aligned; records then are as aligned as their size.
struct GenericRecords {
  std::size_t bytes = 0;

  struct Held {};

  __host__ __device__ std::size_t record_bytes() const { return bytes; }

  template <class Index>
  __device__ __forceinline__ void load(Held&, const Index*, std::uint32_t, const std::byte*) const {}

  template <class Index>
  __device__ __forceinline__ void store(const Held&, const Index* sources, std::uint32_t tile_kept,
                                        const std::byte* input, std::byte* output,
                                        std::uint64_t out_first) const {
    std::byte* out = output + out_first * bytes;
    if (bytes <= kThreadCopyMaxBytes) {
      for (std::uint32_t r = threadIdx.x; r < tile_kept; r += kBlockThreads) {
        const std::byte* from = input + static_cast<std::uint64_t>(sources[r]) * bytes;
        std::byte* to = out + static_cast<std::uint64_t>(r) * bytes;
        if (bytes % 4 == 0) {
          copy_words<unsigned int, kThreadCopyMaxBytes / 4>(to, from, bytes, 0, 1);
        } else {
          copy_words<unsigned char, kThreadCopyMaxBytes>(to, from, bytes, 0, 1);
        }
      }
      return;
    }
    const unsigned lane = threadIdx.x % kWarpThreads;
    for (std::uint32_t r = threadIdx.x / kWarpThreads; r < tile_kept; r += kBlockWarps) {
      const std::byte* from = input + static_cast<std::uint64_t>(sources[r]) * bytes;
      std::byte* to = out + static_cast<std::uint64_t>(r) * bytes;
      if (bytes % 16 == 0) {
        copy_words<uint4, 4>(to, from, bytes, lane, kWarpThreads);
      } else if (bytes % 4 == 0) {
        copy_words<unsigned int, 4>(to, from, bytes, lane, kWarpThreads);
      } else {
        copy_words<unsigned char, 4>(to, from, bytes, lane, kWarpThreads);
      }
    }
  }
};

// Resets kernel (a)'s look-back descriptors and tile counter. Grid: at least
// ceil(num_tiles / blockDim.x) blocks of at least 32 threads. (A template, as
// every kernel here, so that the header can be included by several programs.)
template <class TileState = TileStateT>
__global__ void init_lookback_kernel(TileState tile_state, int num_tiles,
                                     unsigned int* tile_counter) {
  tile_state.InitializeStatus(num_tiles);
  if (blockIdx.x == 0 && threadIdx.x == 0) *tile_counter = 0;
}

// Kernel (a): one job, Bijective2. Grid: tiles_for_domain(domain) blocks of
// kBlockThreads, after init_lookback_kernel on the same state and counter.
// `input` and `output` hold records * record_bytes() bytes.
template <class Records>
__global__ void __launch_bounds__(kBlockThreads, kMinBlocksPerSm)
    shuffle_single_kernel(BijectionParams f, std::uint64_t records, const std::byte* input,
                          std::byte* output, Records copier, TileStateT tile_state,
                          unsigned int* tile_counter) {
  __shared__ BijectionParams s_f;
  __shared__ typename BlockScanT::TempStorage s_scan;
  __shared__ typename TilePrefixT::TempStorage s_prefix_storage;
  __shared__ std::uint64_t s_sources[kTileItems];
  __shared__ unsigned int s_tile;
  __shared__ unsigned long long s_out_first;

  // 1. Take the next tile in start order (so look-back never waits on a
  //    tile that has not started) and the job's bijection.
  if (threadIdx.x == 0) {
    s_tile = atomicAdd(tile_counter, 1u);
    s_f = f;
  }
  __syncthreads();
  const int tile = static_cast<int>(s_tile);
  const std::uint64_t domain = domain_size(s_f);

  // 2. Evaluate, flag, scan within the tile, stage the kept sources.
  const std::uint32_t tile_kept =
      stage_tile<std::uint64_t>(s_f, static_cast<std::uint64_t>(tile) * kTileItems, domain,
                                records, s_sources, s_scan);
  // Publish the tile's count at once so successors can look back past it.
  if (threadIdx.x == 0) {
    if (tile == 0) {
      tile_state.SetInclusive(0, tile_kept);
      s_out_first = 0;
    } else {
      tile_state.SetPartial(tile, tile_kept);
    }
  }
  __syncthreads();

  // 3. Random reads first; warp 0 meanwhile finds the tile's output offset
  //    by decoupled look-back over its predecessors' descriptors.
  typename Records::Held held;
  copier.load(held, s_sources, tile_kept, input);
  if (tile != 0 && threadIdx.x < kWarpThreads) {
    TilePrefixT prefix(tile_state, s_prefix_storage, ::cuda::std::plus<unsigned long long>{},
                       tile);
    const unsigned long long out_first = prefix(tile_kept);
    if (threadIdx.x == 0) s_out_first = out_first;
  }
  __syncthreads();

  // 4. Write the tile's records to their output slots.
  copier.store(held, s_sources, tile_kept, input, output, s_out_first);
}

// One job of kernel (b). Offsets are in bytes from the batch's base pointers
// (input and output share one layout).
struct BatchJob {
  BijectionParams f;
  std::uint64_t records;
  std::uint64_t offset_bytes;
};

// Kernel (b): block b shuffles jobs[b]. Each job's domain must be at most
// 2^32 (sources are staged as 32-bit indices), and its records > 0. The
// block walks the job's tiles in index order with a running output offset
// and stops once all records are placed.
template <class Records>
__global__ void __launch_bounds__(kBlockThreads, kMinBlocksPerSm)
    shuffle_batch_kernel(const BatchJob* jobs, const std::byte* input, std::byte* output,
                         Records copier) {
  __shared__ BijectionParams s_f;
  __shared__ typename BlockScanT::TempStorage s_scan;
  __shared__ std::uint32_t s_sources[kTileItems];
  __shared__ std::uint64_t s_records;
  __shared__ std::uint64_t s_offset;

  // 1. Load this block's job.
  if (threadIdx.x == 0) {
    const BatchJob& job = jobs[blockIdx.x];
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
