// Small helpers of the tests: reproducible bytes, and numbers read out of a
// command's output (--stats' RESULT line, --dry-run's report).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <regex>
#include <string>

namespace extshuffle::testing {

// `n` bytes from a generator seeded with `seed`: the same bytes every run.
inline std::string random_bytes(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 random(seed);
  std::string bytes(n, '\0');
  for (char& c : bytes) c = static_cast<char>(random());
  return bytes;
}

// The number right after the first match of the regular expression
// `pattern` in `text`; a test failure (and 0) when there is none.
inline std::uint64_t number_after(const std::string& text, const std::string& pattern) {
  std::smatch m;
  if (!std::regex_search(text, m, std::regex(pattern + "([0-9]+)"))) {
    ADD_FAILURE() << "no " << pattern << " in: " << text;
    return 0;
  }
  return std::stoull(m[1]);
}

}  // namespace extshuffle::testing
