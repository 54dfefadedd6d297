// Builds .npy files byte by byte, as numpy.save writes them, for the tests.
#pragma once

#include <cstdint>
#include <string>

namespace extshuffle::testing {

// Magic, version, little-endian header length (2 bytes for version 1, 4
// otherwise), the dict padded with spaces and ended by '\n' so that the data
// starts at a multiple of 64 bytes, then the data.
inline std::string npy_file(int major_version, const std::string& dict, const std::string& data) {
  const std::size_t prefix = major_version == 1 ? 10 : 12;
  std::string text = dict;
  while ((prefix + text.size() + 1) % 64 != 0) text += ' ';
  text += '\n';
  std::string file = "\x93NUMPY";
  file += static_cast<char>(major_version);
  file += '\0';
  const std::size_t length = text.size();
  for (std::size_t k = 0; k < prefix - 8; ++k) file += static_cast<char>((length >> (8 * k)) & 0xFF);
  return file + text + data;
}

}  // namespace extshuffle::testing
