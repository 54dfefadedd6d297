#include "extshuffle/io/unbuffered_writes.hpp"

#include <fcntl.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "extshuffle/errors.hpp"
#include "extshuffle/io/aligned_buffer.hpp"

namespace extshuffle::io {

namespace {

// Network and FUSE file systems: there every O_DIRECT write is a
// synchronous round trip to the server or the daemon, and the output's one
// request in flight would wait for each (not measured here: kept buffered).
bool remote_file_system(int fd) {
  struct statfs fs {};
  if (::fstatfs(fd, &fs) != 0) return true;
  switch (static_cast<unsigned long>(fs.f_type)) {
    case 0x6969:      // NFS
    case 0xFF534D42:  // CIFS
    case 0xFE534D42:  // SMB2
    case 0x517B:      // SMB
    case 0x65735546:  // FUSE
    case 0x00C36400:  // Ceph
    case 0x01021997:  // 9p (v9fs)
    case 0x0BD00BD0:  // Lustre
    case 0x47504653:  // GPFS
    case 0x564C:      // NCP
    case 0x6B414653:  // AFS
      return true;
    default: return false;
  }
}

}  // namespace

bool accepts_unbuffered_writes(int fd, std::byte* page, const std::string& destination) {
  if (remote_file_system(fd)) return false;
  // A second open file of the same inode (through /proc: the temporary may
  // have no name), so `fd` stays buffered for the tail and for fsync.
  const int direct = ::open(("/proc/self/fd/" + std::to_string(fd)).c_str(), O_WRONLY | O_DIRECT | O_CLOEXEC);
  if (direct < 0) {
    if (errno == EINVAL || errno == EOPNOTSUPP) return false;
    throw IoError("cannot write output", destination, errno);
  }
  // Some file systems open with O_DIRECT and refuse the first write instead.
  std::memset(page, 0, kPageBytes);
  ssize_t written;
  do {
    written = ::pwrite(direct, page, kPageBytes, 0);
  } while (written < 0 && errno == EINTR);
  const int error = written < 0 ? errno : 0;
  ::close(direct);
  if (::ftruncate(fd, 0) != 0) throw IoError("cannot write output", destination, errno);
  if (error == EINVAL || error == EOPNOTSUPP) return false;
  if (error != 0) throw IoError("cannot write output", destination, error);
  // A short write of one aligned page: taken as a refusal, not a failure.
  return written == static_cast<ssize_t>(kPageBytes);
}

}  // namespace extshuffle::io
