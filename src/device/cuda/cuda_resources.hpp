// Resources of the CUDA back end's host side (docs/conventions.md, Devices: resources,
// planning and streams apart from the kernels): checked CUDA calls, the
// device context, streams, events, pinned host memory and stream-ordered
// device buffers. Plain C++ on the CUDA runtime API: compiled by g++ and nvcc.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>

#include "extshuffle/device/device_error.hpp"

namespace extshuffle::device::cuda {

// Alignment of every device allocation; cudaMalloc gives at least this.
inline constexpr std::uint64_t kAllocationAlignment = 256;

[[noreturn]] inline void throw_cuda(const char* call, cudaError_t error) {
  throw DeviceError(std::string("CUDA ") + call + ": " + cudaGetErrorString(error));
}

inline void check(cudaError_t error, const char* call) {
  if (error != cudaSuccess) throw_cuda(call, error);
}

// Checks a kernel launch (configuration errors surface here; faults during
// execution surface at the next synchronisation).
inline void check_launch(const char* kernel) {
  const cudaError_t error = cudaGetLastError();
  if (error != cudaSuccess) throw_cuda(kernel, error);
}

inline std::uint64_t round_up(std::uint64_t value, std::uint64_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

// The device and how it allocates, fixed at first use.
struct Context {
  int device = 0;
  bool pooled = false;  // stream-ordered allocation (cudaMallocAsync) supported
  cudaMemPool_t pool = nullptr;
};

inline Context make_context() {
  Context context;
  check(cudaGetDevice(&context.device), "cudaGetDevice");
  int pools = 0;
  check(cudaDeviceGetAttribute(&pools, cudaDevAttrMemoryPoolsSupported, context.device),
        "cudaDeviceGetAttribute");
  if (pools != 0) {
    check(cudaDeviceGetDefaultMemPool(&context.pool, context.device), "cudaDeviceGetDefaultMemPool");
    // Keep freed blocks in the pool: successive calls (chunk after chunk)
    // then reuse their buffers instead of mapping fresh memory each time.
    std::uint64_t threshold = std::numeric_limits<std::uint64_t>::max();
    check(cudaMemPoolSetAttribute(context.pool, cudaMemPoolAttrReleaseThreshold, &threshold),
          "cudaMemPoolSetAttribute");
    context.pooled = true;
  }
  return context;
}

inline const Context& context() {
  static const Context instance = make_context();
  return instance;
}

// A stream; its destructor waits for the stream, so no copy touches the
// caller's host buffers after the call that made it returns or throws.
class StreamGuard {
 public:
  StreamGuard() { check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreateWithFlags"); }
  ~StreamGuard() {
    cudaStreamSynchronize(stream_);
    cudaStreamDestroy(stream_);
  }
  StreamGuard(const StreamGuard&) = delete;
  StreamGuard& operator=(const StreamGuard&) = delete;
  cudaStream_t get() const { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

// An event for ordering one stream after another and for the host to wait on.
class Event {
 public:
  Event() { check(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming), "cudaEventCreateWithFlags"); }
  ~Event() { cudaEventDestroy(event_); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  void record(cudaStream_t stream) { check(cudaEventRecord(event_, stream), "cudaEventRecord"); }
  // `stream` runs nothing further until the work recorded before this event is done.
  void order(cudaStream_t stream) const { check(cudaStreamWaitEvent(stream, event_, 0), "cudaStreamWaitEvent"); }
  void wait() const { check(cudaEventSynchronize(event_), "cudaEventSynchronize"); }
  cudaEvent_t get() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

// Page-locked host memory (cudaHostAlloc): copies from and to it run as
// asynchronous DMA. Allocating it is slow (the pages are pinned one by one),
// so the back end keeps its staging buffers for the life of the process.
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  explicit PinnedBuffer(std::size_t bytes) {
    void* memory = nullptr;
    check(cudaHostAlloc(&memory, bytes, cudaHostAllocDefault), "cudaHostAlloc");
    data_ = static_cast<std::byte*>(memory);
    bytes_ = bytes;
  }
  ~PinnedBuffer() {
    if (data_ != nullptr) cudaFreeHost(data_);
  }
  PinnedBuffer(PinnedBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}
  PinnedBuffer& operator=(PinnedBuffer&& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(bytes_, other.bytes_);
    return *this;
  }
  std::byte* data() const { return data_; }
  std::size_t bytes() const { return bytes_; }

 private:
  std::byte* data_ = nullptr;
  std::size_t bytes_ = 0;
};

// True when `host` lies in page-locked memory (cudaHostAlloc or
// cudaHostRegister): DMA can then read or write it directly.
inline bool is_pinned(const void* host) {
  cudaPointerAttributes attributes{};
  if (cudaPointerGetAttributes(&attributes, host) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return attributes.type == cudaMemoryTypeHost;
}

// A device allocation, stream-ordered where the device supports it. Declared
// after the StreamGuard it uses, so it is released before the stream goes.
class DeviceBuffer {
 public:
  DeviceBuffer(std::uint64_t bytes, cudaStream_t stream) : stream_(stream) {
    const Context& c = context();
    if (bytes == 0) return;
    if (c.pooled) {
      cudaError_t error = cudaMallocAsync(&data_, bytes, stream);
      if (error == cudaErrorMemoryAllocation) {
        // The pool may hold free blocks that do not fit this request: give
        // them back to the device and try once more.
        cudaGetLastError();
        check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
        check(cudaMemPoolTrimTo(c.pool, 0), "cudaMemPoolTrimTo");
        error = cudaMallocAsync(&data_, bytes, stream);
      }
      check(error, "cudaMallocAsync");
      pooled_ = true;
    } else {
      check(cudaMalloc(&data_, bytes), "cudaMalloc");
    }
  }
  ~DeviceBuffer() {
    if (data_ == nullptr) return;
    if (pooled_) {
      cudaFreeAsync(data_, stream_);
    } else {
      cudaFree(data_);
    }
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  DeviceBuffer(DeviceBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), stream_(other.stream_), pooled_(other.pooled_) {}

  std::byte* bytes() const { return static_cast<std::byte*>(data_); }
  // Frees the memory after the work queued so far on `stream` (the last
  // stream that uses it) instead of the stream it was allocated on.
  void release_after(cudaStream_t stream) { stream_ = stream; }

 private:
  void* data_ = nullptr;
  cudaStream_t stream_ = nullptr;
  bool pooled_ = false;
};

}  // namespace extshuffle::device::cuda
