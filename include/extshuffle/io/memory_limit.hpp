// How much memory this machine can give the process: its physical memory and
// the memory limits of its cgroup (v2 memory.max, v1 memory.limit_in_bytes),
// its own and its ancestors'. The CLI refuses a --memory above it.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace extshuffle::io {

// Reads a whole small file; nullopt when it cannot be read.
using FileReader = std::function<std::optional<std::string>(const std::string& path)>;

// The lowest cgroup memory limit that applies to the process whose
// /proc/self/cgroup text is `proc_self_cgroup`, reading the limit files under
// `cgroup_root` (normally /sys/fs/cgroup) with `read_file`: for cgroup v2
// ("0::/a/b") memory.max of /a/b, /a and the root; for v1 ("N:...memory...:/a")
// memory/a/memory.limit_in_bytes and its ancestors. "max", unreadable files
// and values of 2^62 or more (v1's "no limit") count as no limit. Pure apart
// from read_file, so tests feed it texts.
std::optional<std::uint64_t> cgroup_memory_limit(const std::string& proc_self_cgroup, const std::string& cgroup_root,
                                                 const FileReader& read_file);

// sysconf's physical memory (1 GiB if it cannot tell).
std::uint64_t physical_memory_bytes();

// The lesser of the physical memory and the cgroup limit of this process.
std::uint64_t usable_memory_bytes();

}  // namespace extshuffle::io
