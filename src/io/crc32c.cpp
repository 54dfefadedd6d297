#include "extshuffle/io/crc32c.hpp"

#include <isa-l/crc.h>

#include <algorithm>
#include <array>

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

namespace {

// The register's update over one zero bit, and its powers, as 32x32
// matrices over GF(2) (column n: the image of bit n).
using Gf2Matrix = std::array<std::uint32_t, 32>;

std::uint32_t times(const Gf2Matrix& m, std::uint32_t v) {
  std::uint32_t sum = 0;
  for (int n = 0; v != 0; ++n, v >>= 1) {
    if (v & 1) sum ^= m[static_cast<std::size_t>(n)];
  }
  return sum;
}

Gf2Matrix squared(const Gf2Matrix& m) {
  Gf2Matrix square{};
  for (std::size_t n = 0; n < 32; ++n) square[n] = times(m, m[n]);
  return square;
}

// The register `crc` advanced through `bytes` zero bytes fed with no
// start: the part of crc32c(crc, b) that depends on crc, which is linear.
std::uint32_t advanced(std::uint32_t crc, std::uint64_t bytes) {
  constexpr std::uint32_t kReflectedPolynomial = 0x82F63B78;
  Gf2Matrix step{};  // one zero bit
  step[0] = kReflectedPolynomial;
  for (std::size_t n = 1; n < 32; ++n) step[n] = std::uint32_t{1} << (n - 1);
  Gf2Matrix power = squared(squared(squared(step)));  // one zero byte
  for (; bytes != 0; bytes >>= 1, power = squared(power)) {
    if (bytes & 1) crc = times(power, crc);
  }
  return crc;
}

}  // namespace

// crc32c(s, b) = A^n s ^ f(b) for b of n bytes: so crc32c(crc_a, b) =
// crc32c(s, b) ^ A^n (crc_a ^ s).
std::uint32_t crc32c_concat(std::uint32_t crc_a, std::uint32_t crc_b, std::uint64_t bytes_b) {
  return crc_b ^ advanced(crc_a ^ kCrc32cStart, bytes_b);
}

}  // namespace extshuffle::io
