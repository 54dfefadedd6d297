#include "extshuffle/io/random_source.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "extshuffle/errors.hpp"

namespace extshuffle::io {

std::uint64_t seed_from_random_source(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw IoError("cannot open random source", path, errno);
  unsigned char bytes[kRandomSourceBytes];
  std::size_t got = 0;
  while (got < sizeof bytes) {
    const ssize_t n = ::read(fd, bytes + got, sizeof bytes - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      ::close(fd);
      throw IoError("cannot read random source", path, error);
    }
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  ::close(fd);
  if (got < sizeof bytes) {
    throw InputError("random source '" + path + "': holds " + std::to_string(got) + " byte" + (got == 1 ? "" : "s") +
                     ", the seed needs " + std::to_string(kRandomSourceBytes));
  }
  std::uint64_t seed = 0;
  for (std::size_t k = sizeof bytes; k-- > 0;) seed = (seed << 8) | bytes[k];
  return seed;
}

}  // namespace extshuffle::io
