// What the codec files of io share: igzip's and libzstd's settings and the
// small helpers around their APIs (compression.cpp, decompressing_reader.cpp,
// compressing_writer.cpp).
#pragma once

#include <isa-l/igzip_lib.h>
#include <zstd.h>
#include <zstd_errors.h>

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace extshuffle::io::codec_support {


// igzip's level for .gz output and the level buffer it asks for at that
// level (ISA-L's default size). bench/gzip_engines_bench on 256 MiB of JSONL
// (docs/benchmarks.md, "gzip engines"): igzip level 1 compresses about 16
// times as fast as zlib -6 (and 3 times as fast as zlib -1) to a ratio
// about that of zlib -1; levels 2 and 3 cost more time for little ratio.
inline constexpr std::uint32_t kIgzipLevel = 1;
inline constexpr std::size_t kIgzipLevelBufferBytes = ISAL_DEF_LVL1_DEFAULT;
// A gzip member header: magic, deflate, no flags, mtime 0, no extra flags,
// OS 3 (Unix): what gzip -n writes, so the output never depends on the clock.
inline constexpr unsigned char kGzipHeader[10] = {0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03};
inline constexpr int kZstdLevel = 3;  // zstd's own default
// Input per zstd worker job (ZSTD_c_jobSize). libzstd's default at level 3 is
// 8 MiB; bench/compression_bench (64 MiB of JSONL, 2 cores) measured the same
// MB/s and ratio (4.983 vs 4.971) with 2 MiB jobs and a quarter of the memory:
// ZSTD_sizeof_CCtx 15 MiB vs 51 MiB with 1 worker, 50 MiB vs 181 MiB with 16.
inline constexpr int kZstdJobBytes = 2 << 20;
// Writes at least this large skip the staging buffer.
inline constexpr std::size_t kDirectWriteBytes = std::size_t{64} << 10;

inline bool ends_with_nocase(std::string_view text, std::string_view suffix) {
  if (text.size() < suffix.size()) return false;
  const std::string_view tail = text.substr(text.size() - suffix.size());
  return std::equal(tail.begin(), tail.end(), suffix.begin(), [](char a, char b) {
    return std::tolower(static_cast<unsigned char>(a)) == b;
  });
}

// igzip counts in uint32_t: larger requests go in pieces.
inline std::uint32_t clamp_uint(std::size_t bytes) {
  return static_cast<std::uint32_t>(std::min<std::size_t>(bytes, UINT32_MAX));
}

// igzip's error codes in zlib's words (what gzip -d users know).
inline std::string igzip_reason(int code) {
  switch (code) {
    case ISAL_INCORRECT_CHECKSUM:
      return "incorrect data check";
    case ISAL_INVALID_BLOCK:
      return "invalid block type or lengths";
    case ISAL_INVALID_SYMBOL:
      return "invalid code";
    case ISAL_INVALID_LOOKBACK:
      return "invalid distance too far back";
    case ISAL_INVALID_WRAPPER:
      return "incorrect header";
    case ISAL_UNSUPPORTED_METHOD:
      return "unknown compression method";
    case ISAL_NEED_DICT:
      return "needs a preset dictionary";
    default:
      return "igzip error " + std::to_string(code);
  }
}

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
