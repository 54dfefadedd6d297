// The CUDA back end's long-lived resources (docs/conventions.md, Devices): the pinned
// staging ring, the pinned descriptor ring and three streams (copies in,
// kernels, copies out), made at first use and kept, because pinning memory
// costs milliseconds. One call uses them at a time: Session::lock() holds
// them for the length of a call; calls from several threads queue.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <exception>
#include <mutex>

#include "device/cuda/kernel_launch.hpp"
#include "device/cuda/pinned_ring.hpp"
#include "device/cuda_backend.hpp"

namespace extshuffle::device::cuda {

class Session {
 public:
  // The process's session, locked for the caller until the returned lock goes.
  static std::unique_lock<std::mutex> lock();
  static Session& get();  // with the lock held

  const StagingConfig& config() const { return config_; }
  void configure(const StagingConfig& config);

  PinnedRing& data_ring();
  PinnedRing& descriptor_ring();
  cudaStream_t in_stream() const { return streams_[0]; }
  cudaStream_t compute_stream() const { return streams_[1]; }
  cudaStream_t out_stream() const { return streams_[2]; }

  // Waits for all three streams (after a failure too: no copy may touch a
  // caller's buffer once the call has returned).
  void synchronize() noexcept;

 private:
  Session();
  StagingConfig config_;
  std::unique_ptr<PinnedRing> data_ring_;
  std::unique_ptr<PinnedRing> descriptor_ring_;
  cudaStream_t streams_[3] = {};
};

// Waits for the session's streams when its scope is left by an exception:
// declared after a call's device buffers, so they are freed only once no
// kernel or copy uses them, and no copy touches the caller's memory later.
class SynchronizeOnThrow {
 public:
  explicit SynchronizeOnThrow(Session& session) : session_(session), exceptions_(std::uncaught_exceptions()) {}
  ~SynchronizeOnThrow() {
    if (std::uncaught_exceptions() > exceptions_) session_.synchronize();
  }
  SynchronizeOnThrow(const SynchronizeOnThrow&) = delete;
  SynchronizeOnThrow& operator=(const SynchronizeOnThrow&) = delete;

 private:
  Session& session_;
  int exceptions_;
};

// Bytes of device memory a call may plan on: free device memory plus what
// the pool holds unused, less a reserve for the context and other users.
std::uint64_t device_memory_budget();

}  // namespace extshuffle::device::cuda
