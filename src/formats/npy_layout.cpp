#include "extshuffle/formats/npy_layout.hpp"

#include <algorithm>

#include "extshuffle/errors.hpp"
#include "extshuffle/formats/npy_header.hpp"

namespace extshuffle::formats {

std::uint64_t npy_head_bytes(std::string_view head, std::uint64_t input_bytes) {
  // The header's length field sits in its first 12 bytes (version 2.0 and up).
  if (head.size() < 12) return head.size();
  const std::uint64_t declared = parse_npy_header_size(head);
  return declared > head.size() && declared <= input_bytes ? declared : head.size();
}

NpyLayout npy_layout(std::string_view head, std::uint64_t input_bytes, std::size_t record_size,
                     const std::string& display_name) {
  const NpyHeader npy = parse_npy_header(head, display_name);
  if (record_size != 0 && record_size != npy.row_bytes) {
    throw UsageError("input " + display_name + " is a .npy array whose rows are " + std::to_string(npy.row_bytes) +
                     " bytes, not --record-size " + std::to_string(record_size));
  }
  const std::uint64_t data_bytes = input_bytes - npy.header_bytes;
  if (data_bytes != npy.rows * npy.row_bytes) {
    throw InputError("input " + display_name + ": .npy data holds " + std::to_string(data_bytes) +
                     " bytes but its shape and dtype need " + std::to_string(npy.rows * npy.row_bytes));
  }
  NpyLayout layout;
  layout.data_offset = npy.header_bytes;
  // Rows of zero bytes (a dimension of extent 0) leave nothing to move.
  layout.record_size = std::max<std::uint64_t>(npy.row_bytes, 1);
  layout.records = npy.row_bytes == 0 ? 0 : npy.rows;
  layout.header = std::string(head.substr(0, npy.header_bytes));
  return layout;
}


std::string npy_header_with_rows(std::string_view header, std::uint64_t rows, const std::string& display_name) {
  const NpyHeader parsed = parse_npy_header(header, display_name);
  const std::size_t prefix = parsed.major_version == 1 ? 10 : 12;
  std::string dict(header.substr(prefix));
  // 1. The shape's first extent: the digits after "'shape': (" (a field of a
  //    structured dtype named 'shape' is followed by a comma, not a colon);
  //    of the last such key, the one NumPy reads when a header repeats it.
  std::size_t at = std::string::npos;
  for (const char* key : {"'shape'", "\"shape\""}) {
    for (std::size_t k = dict.find(key); k != std::string::npos; k = dict.find(key, k + 1)) {
      std::size_t p = dict.find_first_not_of(" ", k + 7);
      if (p == std::string::npos || dict[p] != ':') continue;
      p = dict.find_first_not_of(" ", p + 1);
      if (p == std::string::npos || dict[p] != '(') continue;
      p = dict.find_first_not_of(" ", p + 1);
      if (p != std::string::npos && dict[p] >= '0' && dict[p] <= '9' && (at == std::string::npos || p > at)) at = p;
    }
  }
  if (at == std::string::npos) throw InputError(display_name + ": malformed .npy header: no shape to rewrite");
  const std::size_t digits_end = dict.find_first_not_of("0123456789", at);
  if (dict.compare(at, digits_end - at, std::to_string(rows)) == 0) return std::string(header);
  dict.replace(at, digits_end - at, std::to_string(rows));
  // 2. Padding: strip the old, pad to a multiple of 64 with the newline last.
  while (!dict.empty() && (dict.back() == ' ' || dict.back() == '\n')) dict.pop_back();
  int version = parsed.major_version;
  if (version == 1 && dict.size() + 1 + 10 > 65535) version = 2;
  const std::size_t head = version == 1 ? 10 : 12;
  const std::size_t total = (head + dict.size() + 1 + 63) / 64 * 64;
  dict.append(total - head - dict.size() - 1, ' ');
  dict += '\n';
  std::string out(kNpyMagic);
  out += static_cast<char>(version);
  out += '\0';
  const std::uint64_t length = dict.size();
  for (std::size_t b = 0; b < head - 8; ++b) out += static_cast<char>((length >> (8 * b)) & 0xFF);
  out += dict;
  return out;
}

}  // namespace extshuffle::formats
