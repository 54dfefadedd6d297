// Text-like benchmark data: JSONL lines of random words and numbers
// (xorshift64, the same bytes on every platform), about 5.7:1 for gzip -6
// and 5:1 for zstd -3, like real JSONL.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace extshuffle::bench {

inline std::string jsonl_data(std::size_t bytes) {
  static const char* const kWords[] = {"the",    "of",     "and",   "shuffle", "record",  "file",   "memory",
                                       "random", "output", "input", "seed",    "disk",    "bucket", "chunk",
                                       "permutation", "external", "line", "value", "system", "data"};
  std::uint64_t x = 0x9E3779B97F4A7C15ULL;
  auto next = [&x] {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x;
  };
  std::string text;
  text.reserve(bytes + 256);
  for (std::uint64_t id = 0; text.size() < bytes; ++id) {
    text += "{\"id\": " + std::to_string(id) + ", \"score\": " + std::to_string(next() % 1000000) + ", \"text\": \"";
    const int words = 4 + static_cast<int>(next() % 16);
    for (int w = 0; w < words; ++w) {
      if (w) text += ' ';
      text += kWords[next() % 20];
    }
    text += "\"}\n";
  }
  text.resize(bytes);
  return text;
}

}  // namespace extshuffle::bench
