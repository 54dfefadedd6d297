#include "extshuffle/device/host_memory.hpp"

#include <sys/mman.h>

#include <new>


namespace extshuffle::device {

namespace {
// Huge-page aligned, so that the whole buffer can be backed by 2 MiB pages.
constexpr std::size_t kHugePageBytes = std::size_t{2} << 20;
constexpr std::align_val_t kAlignment{kHugePageBytes};
}

void HostMemoryDeleter::operator()(std::byte* memory) const {
  if (memory != nullptr) ::operator delete[](memory, kAlignment);
}

HostMemory allocate_host_memory(Device device, std::size_t bytes) {
  require_usable(device);
  auto* memory = static_cast<std::byte*>(::operator new[](bytes, kAlignment));
  // The shuffles read their chunk (8 MiB and more) at random: with 4 KiB
  // pages nearly every read missed the TLB. Transparent huge pages are often
  // enabled only on request (madvise mode); a kernel without them ignores it.
  if (bytes >= kHugePageBytes) (void)::madvise(memory, bytes / kHugePageBytes * kHugePageBytes, MADV_HUGEPAGE);
  return HostMemory(memory, HostMemoryDeleter{});
}

}  // namespace extshuffle::device
