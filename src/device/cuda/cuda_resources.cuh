// Resources of the CUDA back end's host dispatch (DESIGN.md 3: resources,
// planning and streams apart from the kernels): checked CUDA calls, the
// device context, a stream per call and stream-ordered device buffers.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
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

// A stream of this call; its destructor waits for the stream, so no copy
// touches the caller's host buffers after the call returns or throws.
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

  std::byte* bytes() const { return static_cast<std::byte*>(data_); }

 private:
  void* data_ = nullptr;
  cudaStream_t stream_ = nullptr;
  bool pooled_ = false;
};

}  // namespace extshuffle::device::cuda
