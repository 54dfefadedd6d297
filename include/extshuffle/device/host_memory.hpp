// Host memory for the buffers the device layer reads and writes: page-locked
// (pinned) when the CUDA back end will use it, so that transfers run at full
// speed and asynchronously; otherwise 2 MiB-aligned memory backed by
// transparent huge pages where the kernel has them (random reads of a large
// node miss the TLB far less), page-aligned in any case as STXXL wants.
#pragma once

#include <cstddef>
#include <memory>

#include "extshuffle/device/shuffle_records.hpp"

namespace extshuffle::device {

struct HostMemoryDeleter {
  bool pinned = false;
  void operator()(std::byte* memory) const;
};
using HostMemory = std::unique_ptr<std::byte[], HostMemoryDeleter>;

// `bytes` of host memory for buffers used with `device`. Throws DeviceError
// when pinned memory cannot be had, std::bad_alloc otherwise.
HostMemory allocate_host_memory(Device device, std::size_t bytes);

}  // namespace extshuffle::device
