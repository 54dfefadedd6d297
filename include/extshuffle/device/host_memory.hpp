// Host memory for the buffers the device layer reads and writes: 2 MiB-aligned
// memory backed by transparent huge pages (random reads of a large node miss
// the TLB far less), except in a VM whose host takes back free memory, where a
// fresh huge page costs more than it saves; page-aligned in any case as
// STXXL wants. It is not pinned even for the GPU: the CUDA back end moves
// bytes through pinned staging buffers of bounded size (docs/conventions.md, Devices), so
// the memory budget is never locked into RAM as a whole.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "extshuffle/device/shuffle_records.hpp"

namespace extshuffle::device {

struct HostMemoryDeleter {
  void operator()(std::byte* memory) const;
};
using HostMemory = std::unique_ptr<std::byte[], HostMemoryDeleter>;

// `bytes` of host memory for buffers used with `device`. Throws DeviceError
// when `device` is kCuda and no GPU is usable, std::bad_alloc when the memory
// cannot be had.
HostMemory allocate_host_memory(Device device, std::size_t bytes);

// Whether a virtio balloon's feature bits (the text of
// /sys/bus/virtio/drivers/virtio_balloon/virtio*/features, one character a
// bit) include free page reporting: the guest then hands its free 2 MiB
// blocks back to the host, so those are cold when next used.
bool reports_free_pages(std::string_view balloon_features);

// Whether any virtio balloon of this machine reports free pages.
bool host_takes_back_free_pages();

// Bytes of this process's anonymous memory backed by transparent huge pages
// now (AnonHugePages of /proc/self/smaps_rollup); 0 where it cannot be read.
std::uint64_t huge_page_bytes();

}  // namespace extshuffle::device
