// Text cut into records, for tests of line-mode output.
#pragma once

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace extshuffle::testing {

// Cuts text into records at `terminator`, each keeping its terminator (a
// last record without one is kept as it is).
inline std::vector<std::string> split_records(const std::string& text, char terminator = '\n') {
  std::vector<std::string> records;
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t end = text.find(terminator, at);
    end = end == std::string::npos ? text.size() : end + 1;
    records.push_back(text.substr(at, end - at));
    at = end;
  }
  return records;
}

// JSONL records of lognormal lengths (median about 440 bytes, a tail to
// tens of KB), as the benchmarks' generator makes them.
inline std::string heavy_jsonl(std::uint64_t records, std::uint64_t seed) {
  std::mt19937_64 draw(seed);
  std::lognormal_distribution<double> length(6.1, 1.0);
  std::string text;
  for (std::uint64_t i = 0; i < records; ++i) {
    const auto n = static_cast<std::size_t>(std::min(60000.0, length(draw)));
    text +=
        "{\"id\": " + std::to_string(i) + ", \"text\": \"" + std::string(n, static_cast<char>('a' + i % 26)) + "\"}\n";
  }
  return text;
}

}  // namespace extshuffle::testing
