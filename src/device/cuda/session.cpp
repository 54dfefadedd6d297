#include "device/cuda/session.hpp"

#include "device/cuda/cuda_resources.hpp"

namespace extshuffle::device::cuda {
namespace {

// Device memory left unplanned for the CUDA context's own needs and for
// other users of the GPU.
constexpr std::uint64_t kDeviceMemoryReserveBytes = std::uint64_t{256} << 20;

std::mutex& session_mutex() {
  static std::mutex mutex;
  return mutex;
}

}  // namespace

std::unique_lock<std::mutex> Session::lock() { return std::unique_lock<std::mutex>(session_mutex()); }

Session& Session::get() {
  // Never destroyed: its pinned memory and streams must not be released
  // after the CUDA runtime has shut down at exit.
  static Session* session = new Session;
  return *session;
}

Session::Session() {
  for (cudaStream_t& stream : streams_) {
    check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  }
}

void Session::configure(const StagingConfig& config) {
  synchronize();
  data_ring_.reset();
  descriptor_ring_.reset();
  config_ = config;
}

PinnedRing& Session::data_ring() {
  if (!data_ring_) data_ring_ = std::make_unique<PinnedRing>(config_.slots, config_.slot_bytes);
  return *data_ring_;
}

PinnedRing& Session::descriptor_ring() {
  if (!descriptor_ring_) {
    descriptor_ring_ = std::make_unique<PinnedRing>(config_.descriptor_slots, config_.descriptor_slot_bytes);
  }
  return *descriptor_ring_;
}

void Session::synchronize() noexcept {
  if (data_ring_) data_ring_->abandon();
  if (descriptor_ring_) descriptor_ring_->abandon();
  for (cudaStream_t stream : streams_) cudaStreamSynchronize(stream);
  cudaGetLastError();
}

std::uint64_t device_memory_budget() {
  std::size_t free_bytes = 0;
  std::size_t total_bytes = 0;
  check(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
  std::uint64_t available = free_bytes;
  const Context& c = context();
  if (c.pooled) {
    std::uint64_t reserved = 0;
    std::uint64_t used = 0;
    check(cudaMemPoolGetAttribute(c.pool, cudaMemPoolAttrReservedMemCurrent, &reserved), "cudaMemPoolGetAttribute");
    check(cudaMemPoolGetAttribute(c.pool, cudaMemPoolAttrUsedMemCurrent, &used), "cudaMemPoolGetAttribute");
    if (reserved > used) available += reserved - used;
  }
  return available > kDeviceMemoryReserveBytes ? available - kDeviceMemoryReserveBytes : 0;
}

}  // namespace extshuffle::device::cuda
