// Step 3 of Algorithm 1 (Mitchell et al.): moving the kept records of a tile
// from their sources to consecutive output slots, for every record size. The
// tile agent (bijection_tiles.cuh) has staged the tile's source indices in
// output order; a copier loads and stores the records. Device helpers only.
#pragma once

#include <cstddef>
#include <cstdint>

#include <vector_types.h>

#include "device/cuda/bijection_tiles.cuh"

namespace extshuffle::device::cuda::kernels {

// Step 3, records of sizeof(T) bytes (1, 2, 4, 8, 16) moved as single loads
// and stores; T = uint4 gives 16-byte vector accesses. Output rank r of the
// tile is handled by thread r % kBlockThreads, so each store instruction of a
// warp writes consecutive records. load() issues all random reads before
// store() writes, so they are in flight together (and, in the single-pass kernel, during
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

}  // namespace extshuffle::device::cuda::kernels
