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

}  // namespace extshuffle::io
