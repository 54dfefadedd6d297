#include "extshuffle/io/scratch_space.hpp"

#include <fcntl.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>

#include "extshuffle/errors.hpp"

namespace extshuffle::io {
namespace {

constexpr std::uint64_t kMaxReserveBytes = std::uint64_t{1} << 30;

std::uint64_t room(const struct statvfs& fs) {
  const std::uint64_t total = static_cast<std::uint64_t>(fs.f_blocks) * fs.f_frsize;
  const std::uint64_t available = static_cast<std::uint64_t>(fs.f_bavail) * fs.f_frsize;
  const std::uint64_t reserve = scratch_reserve_bytes(total);
  return available > reserve ? available - reserve : 0;
}

}  // namespace

std::uint64_t scratch_reserve_bytes(std::uint64_t total_bytes) {
  return std::min(kMaxReserveBytes, total_bytes / 100);
}

std::uint64_t scratch_room_bytes(int fd) {
  struct statvfs fs {};
  if (fd < 0 || ::fstatvfs(fd, &fs) != 0 || fs.f_blocks == 0) return UINT64_MAX;
  return room(fs);
}

void check_scratch_room(const std::string& directory, std::uint64_t needed_bytes, const std::string& what) {
  struct statvfs fs {};
  if (::statvfs(directory.c_str(), &fs) != 0 || fs.f_blocks == 0) return;
  const std::uint64_t left = room(fs);
  if (needed_bytes > left) {
    throw Error(what + ": needs at least " + std::to_string(needed_bytes) + " bytes of scratch space, but '" +
                directory + "' has " + std::to_string(left) +
                " bytes to spare (its free space less a reserve of 1%, at most 1 GiB): give -T a larger file system");
  }
}

}  // namespace extshuffle::io
