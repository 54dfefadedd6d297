// CRC-32C (Castagnoli) of bytes, through Intel ISA-L's crc32_iscsi (the
// CPU's crc32 instruction: tens of GB/s), for the checksums a checkpoint
// keeps of its scratch regions (io/bucket_store.hpp) and journal records.
// Started from kCrc32cStart, continued piece by piece: crc32c(crc32c(s, a),
// b) is the CRC of a then b. Not inverted at the end: only compared with
// itself.
#pragma once

#include <cstddef>
#include <cstdint>

namespace extshuffle::io {

inline constexpr std::uint32_t kCrc32cStart = 0xFFFFFFFF;

std::uint32_t crc32c(std::uint32_t crc, const void* data, std::uint64_t bytes);

// The CRC of a then b, from a's and b's CRCs (each started from
// kCrc32cStart) and b's length, without their bytes: what a bucket made of
// several streams (extshuffle-mpi's pairs) is checked against. O(log
// bytes_b) (zlib's crc32_combine, for this polynomial and start).
std::uint32_t crc32c_concat(std::uint32_t crc_a, std::uint32_t crc_b, std::uint64_t bytes_b);

}  // namespace extshuffle::io
