// Text cut into records, for tests of line-mode output.
#pragma once

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

}  // namespace extshuffle::testing
