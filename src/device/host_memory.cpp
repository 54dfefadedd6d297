#include "extshuffle/device/host_memory.hpp"

#include <glob.h>
#include <sys/mman.h>

#include <cstdio>
#include <cstring>
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
  // The shuffles read their chunk (8 MiB and more) at random, so huge pages
  // save TLB misses and faults; but in a VM that hands free 2 MiB blocks back
  // to its host, each fresh huge page is first faulted in by the host, which
  // cost 4-8 s a GiB where small pages cost 0.7 (docs/benchmarks.md,
  // "Transparent huge pages"). A kernel without them ignores the request.
  static const bool ask = !host_takes_back_free_pages();
  if (ask && bytes >= kHugePageBytes) (void)::madvise(memory, bytes / kHugePageBytes * kHugePageBytes, MADV_HUGEPAGE);
  return HostMemory(memory, HostMemoryDeleter{});
}

bool reports_free_pages(std::string_view balloon_features) {
  // The file spells feature bit i as character i; VIRTIO_BALLOON_F_REPORTING
  // is bit 5 (virtio 1.1, 5.5.3).
  constexpr std::size_t kReportingBit = 5;
  return balloon_features.size() > kReportingBit && balloon_features[kReportingBit] == '1';
}

bool host_takes_back_free_pages() {
  glob_t found{};
  bool reporting = false;
  if (::glob("/sys/bus/virtio/drivers/virtio_balloon/virtio*/features", 0, nullptr, &found) == 0) {
    for (std::size_t i = 0; i < found.gl_pathc && !reporting; ++i) {
      std::FILE* file = std::fopen(found.gl_pathv[i], "r");
      if (file == nullptr) continue;
      char line[256] = {};
      if (std::fgets(line, sizeof line, file) != nullptr) reporting = reports_free_pages(line);
      std::fclose(file);
    }
  }
  ::globfree(&found);
  return reporting;
}

std::uint64_t huge_page_bytes() {
  std::FILE* file = std::fopen("/proc/self/smaps_rollup", "r");
  if (file == nullptr) return 0;
  char line[256];
  unsigned long long kib = 0;
  while (std::fgets(line, sizeof line, file) != nullptr) {
    if (std::strncmp(line, "AnonHugePages:", 14) == 0) {
      (void)std::sscanf(line + 14, "%llu", &kib);
      break;
    }
  }
  std::fclose(file);
  return static_cast<std::uint64_t>(kib) * 1024;
}

}  // namespace extshuffle::device
