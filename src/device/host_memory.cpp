#include "extshuffle/device/host_memory.hpp"

#include <new>

#include "cuda_backend.hpp"

namespace extshuffle::device {

namespace {
constexpr std::align_val_t kAlignment{4096};
}

void HostMemoryDeleter::operator()(std::byte* memory) const {
  if (memory == nullptr) return;
  if (pinned) {
    cuda::free_pinned(memory);
  } else {
    ::operator delete[](memory, kAlignment);
  }
}

HostMemory allocate_host_memory(Device device, std::size_t bytes) {
  if (device == Device::kCuda) return HostMemory(cuda::allocate_pinned(bytes), HostMemoryDeleter{true});
  return HostMemory(static_cast<std::byte*>(::operator new[](bytes, kAlignment)), HostMemoryDeleter{false});
}

}  // namespace extshuffle::device
