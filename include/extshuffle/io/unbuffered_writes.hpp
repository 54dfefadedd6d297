// Unbuffered (O_DIRECT) writes of an output file: whole pages go straight to
// the disk, skipping the kernel's copy into page cache that this VM's host
// has to fault in first (docs/benchmarks.md, "Unbuffered output in RAM");
// the unaligned tail goes through the page cache, so the bytes are the same.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace extshuffle::io {

// Whether the file system of `fd` (a regular, empty file opened for writing)
// takes unbuffered writes: a page of zeros written to it with O_DIRECT
// through a second descriptor, then the file truncated back to empty. False
// where the open or the write is refused with EINVAL (or EOPNOTSUPP), and
// on network and FUSE file systems (NFS, CIFS, FUSE, Ceph, 9p, Lustre,
// ...), untried: the output is then written through the page cache. `page` is a page-aligned
// page of scratch memory (overwritten). Throws IoError naming `destination`
// for any other failure (ENOSPC, EIO), and when the file cannot be emptied
// again.
bool accepts_unbuffered_writes(int fd, std::byte* page, const std::string& destination);

}  // namespace extshuffle::io
