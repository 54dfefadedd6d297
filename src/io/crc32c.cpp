#include "extshuffle/io/crc32c.hpp"

#include <isa-l/crc.h>

#include <algorithm>

namespace extshuffle::io {

std::uint32_t crc32c(std::uint32_t crc, const void* data, std::uint64_t bytes) {
  const auto* at = static_cast<const unsigned char*>(data);
  // crc32_iscsi takes an int length: pieces of at most 1 GiB.
  while (bytes > 0) {
    const auto piece = static_cast<int>(std::min<std::uint64_t>(bytes, std::uint64_t{1} << 30));
    crc = crc32_iscsi(const_cast<unsigned char*>(at), piece, crc);
    at += piece;
    bytes -= static_cast<std::uint64_t>(piece);
  }
  return crc;
}

}  // namespace extshuffle::io
