// Host <-> device copies of the CUDA back end, through the pinned ring
// (docs/conventions.md, Devices). The caller's memory is usually pageable: each piece is
// copied into a pinned slot by the host (on several threads when large) and
// moved by DMA on a stream, so the host fills slot k + 1 while slot k is on
// the bus and the kernels run; pieces of pinned caller memory of at least
// kDirectMinBytes go by DMA directly. Device-to-host pieces are copied on to
// the caller when their slot is next taken (or at PinnedRing::finish), in the
// order they were queued.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>

#include "device/cuda/pinned_ring.hpp"

namespace extshuffle::device::cuda {

// Host bytes [host, host + bytes) and device bytes [device_offset, +bytes).
struct HostRange {
  std::byte* host = nullptr;
  std::uint64_t device_offset = 0;
  std::uint64_t bytes = 0;
};

// Pinned caller ranges at least this long skip the staging copy. Not
// measured (no GPU): bench/cuda_shuffle_bench.cu, "pipeline" lines with
// pinned and pageable buffers.
inline constexpr std::uint64_t kDirectMinBytes = std::uint64_t{1} << 16;

// Called before the bytes of a piece are staged: all device bytes below
// `device_end` of the ranges being copied in must be in place in host memory.
using AwaitHostBytes = std::function<void(std::uint64_t device_end)>;
// Called when host bytes [host, host + bytes) of a copy out are final, in order.
using HostBytesLanded = std::function<void(const std::byte* host, std::uint64_t bytes)>;

class Transfers {
 public:
  Transfers(PinnedRing& ring, int threads) : ring_(ring), threads_(threads) {}

  // Queues copies of `ranges` (in device order) into d_base on `stream`.
  // Returns once every byte has been staged or queued; the host memory may
  // then be reused. Throws DeviceError on a CUDA failure.
  void copy_in(std::span<const HostRange> ranges, std::byte* d_base, cudaStream_t stream,
               const AwaitHostBytes& await = {});

  // Queues copies of d_base's bytes back to `ranges` on `stream`; the host
  // bytes are written (and `landed` told) as the ring's slots are retaken.
  void copy_out(std::span<const HostRange> ranges, const std::byte* d_base, cudaStream_t stream,
                const HostBytesLanded& landed = {});

 private:
  PinnedRing& ring_;
  int threads_;
};

// memcpy on up to `threads` threads (large copies only).
void copy_host_bytes(std::byte* to, const std::byte* from, std::size_t bytes, int threads);

}  // namespace extshuffle::device::cuda
