// Kernels of a node run whole on the device (node_on_device.hpp): the
// scatter of shuffled chunk slices into bucket order (step 3 of a split,
// Gustedt's IOPerm) and the identity permutation of the text layout's
// record indices. Kernels only; kernel_launch.cu launches them.
#pragma once

#include <cstddef>
#include <cstdint>

namespace extshuffle::device::cuda::kernels {

// `records` records from record `from` of the source to record `to` of the
// destination (record offsets from the two base pointers).
struct SliceCopy {
  std::uint64_t from;
  std::uint64_t to;
  std::uint64_t records;
};

// Copies each slice as words of W (sizeof(W) divides the record size and
// both base pointers are aligned to it, so every slice is too): block b
// takes slices b, b + gridDim.x, ...; its threads stride over the words, so
// reads and writes are coalesced.
template <class W>
__global__ void scatter_slices_kernel(const SliceCopy* slices, std::uint64_t slice_count,
                                      const std::byte* __restrict__ from,
                                      std::byte* __restrict__ to, std::uint64_t record_bytes) {
  const std::uint64_t words_per_record = record_bytes / sizeof(W);
  for (std::uint64_t s = blockIdx.x; s < slice_count; s += gridDim.x) {
    const SliceCopy slice = slices[s];
    const W* src = reinterpret_cast<const W*>(from + slice.from * record_bytes);
    W* dst = reinterpret_cast<W*>(to + slice.to * record_bytes);
    const std::uint64_t words = slice.records * words_per_record;
    for (std::uint64_t w = threadIdx.x; w < words; w += blockDim.x) dst[w] = src[w];
  }
}

// values[k] = k for k < n. (A template, as every kernel here, so that the
// header can be included by several programs.)
template <class Index = std::uint32_t>
__global__ void iota_kernel(Index* values, std::uint64_t n) {
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  for (std::uint64_t k = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < n;
       k += stride) {
    values[k] = static_cast<Index>(k);
  }
}

}  // namespace extshuffle::device::cuda::kernels
