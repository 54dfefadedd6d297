// The kernel's pseudo file systems (proc, sysfs, debugfs, cgroup...): their
// files are made as they are read, so their size is not their length
// (/proc/cpuinfo and /proc/sys/* say 0 bytes, a /sys attribute 4096), and
// their directories take no new files. An input there is read once, as a
// pipe is (io/input_source.hpp); an output there is refused with the reason
// (driver/job_files.cpp), never with the error of a failed create.
#pragma once

#include <sys/stat.h>

#include <string>

namespace extshuffle::io {

// The pseudo file system `fd` lies on ("proc", "sysfs"...), or "" for any other.
std::string pseudo_file_system(int fd);

// Whether the regular file `fd` (`st` its fstat) can be read at offsets up
// to its size: not on a pseudo file system, and not a file of 0 bytes that
// reads some (a FUSE file system's generated files). Cost: a statfs, and a
// one-byte pread for a file of 0 bytes.
bool size_is_length(int fd, const struct stat& st);

// Whether the file at `path` is read where it lies, at offsets: a block
// device, or a regular file whose size is its length. False for anything
// else, and for what cannot be opened.
bool readable_in_place(const std::string& path);

}  // namespace extshuffle::io
