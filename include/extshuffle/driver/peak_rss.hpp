// The process's peak resident memory so far, for a run's RESULT
// (RunStats::peak_rss_bytes).
#pragma once

#include <sys/resource.h>

#include <cstdint>

namespace extshuffle::driver {

// Bytes; the kernel's figure (getrusage's ru_maxrss, in KiB), one system call.
inline std::uint64_t peak_rss_bytes() {
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<std::uint64_t>(usage.ru_maxrss) * 1024;
}

}  // namespace extshuffle::driver
