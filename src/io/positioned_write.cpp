#include "extshuffle/io/positioned_write.hpp"

#include <unistd.h>

#include <cerrno>

#include "extshuffle/errors.hpp"

namespace extshuffle::io {

void write_at(int fd, const std::byte* data, std::size_t bytes, std::uint64_t offset, const std::string& destination) {
  while (bytes > 0) {
    const ssize_t n = ::pwrite(fd, data, bytes, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw IoError("cannot write output", destination, errno);
    if (n == 0) throw IoError("cannot write output", destination, EIO);
    data += n;
    bytes -= static_cast<std::size_t>(n);
    offset += static_cast<std::uint64_t>(n);
  }
}

}  // namespace extshuffle::io
