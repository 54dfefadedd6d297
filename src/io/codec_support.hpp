// What the codec files of io share: zlib's and libzstd's settings and the
// small helpers around their APIs (compression.cpp, decompressing_reader.cpp,
// compressing_writer.cpp).
#pragma once

#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstddef>
#include <string>
#include <string_view>

namespace extshuffle::io::codec_support {


inline constexpr int kGzipLevel = 6;  // gzip's own default
inline constexpr int kZstdLevel = 3;  // zstd's own default
// Input per zstd worker job (ZSTD_c_jobSize). libzstd's default at level 3 is
// 8 MiB; bench/compression_bench (64 MiB of JSONL, 2 cores) measured the same
// MB/s and ratio (4.983 vs 4.971) with 2 MiB jobs and a quarter of the memory:
// ZSTD_sizeof_CCtx 15 MiB vs 51 MiB with 1 worker, 50 MiB vs 181 MiB with 16.
inline constexpr int kZstdJobBytes = 2 << 20;
// zlib: 15-bit window (32 KiB), +16 for the gzip wrapper instead of zlib's.
inline constexpr int kGzipWindowBits = 15 + 16;
// Writes at least this large skip the staging buffer.
inline constexpr std::size_t kDirectWriteBytes = std::size_t{64} << 10;

inline bool ends_with_nocase(std::string_view text, std::string_view suffix) {
  if (text.size() < suffix.size()) return false;
  const std::string_view tail = text.substr(text.size() - suffix.size());
  return std::equal(tail.begin(), tail.end(), suffix.begin(), [](char a, char b) {
    return std::tolower(static_cast<unsigned char>(a)) == b;
  });
}

// zlib counts in uInt (32 bits): larger requests go in pieces.
inline uInt clamp_uint(std::size_t bytes) { return static_cast<uInt>(std::min<std::size_t>(bytes, UINT_MAX)); }

// libzstd's messages start with a capital letter; ours are lower case.
inline std::string zstd_reason(std::size_t code) {
  switch (ZSTD_getErrorCode(code)) {
    case ZSTD_error_frameParameter_windowTooLarge:
      return "frame needs a window larger than 128 MiB (written with zstd --long?)";
    case ZSTD_error_checksum_wrong:
      return "checksum mismatch";
    default:
      break;
  }
  std::string reason = ZSTD_getErrorName(code);
  if (!reason.empty()) reason[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(reason[0])));
  return reason;
}

}  // namespace extshuffle::io::codec_support
