#include "extshuffle/formats/npy_rows.hpp"

#include <cctype>

#include "extshuffle/errors.hpp"

namespace extshuffle::formats {
namespace {

std::size_t length_field_bytes(int major_version) { return major_version == 1 ? 2 : 4; }

}  // namespace

std::string npy_header_with_rows(std::string_view header, std::uint64_t rows) {
  const int major = header.size() > 6 ? static_cast<unsigned char>(header[6]) : 0;
  const std::size_t prefix = 8 + length_field_bytes(major);
  if (header.size() <= prefix) throw InputError(".npy header: truncated");
  std::string dict(header.substr(prefix));
  while (!dict.empty() && (dict.back() == ' ' || dict.back() == '\n')) dict.pop_back();
  // 1. The first dimension: the digits after "'shape': (".
  std::size_t at = dict.find("'shape'");
  if (at == std::string::npos) at = dict.find("\"shape\"");
  if (at != std::string::npos) at = dict.find('(', at);
  if (at == std::string::npos) throw InputError(".npy header: no shape tuple");
  std::size_t first = at + 1;
  while (first < dict.size() && std::isspace(static_cast<unsigned char>(dict[first]))) ++first;
  std::size_t last = first;
  while (last < dict.size() && std::isdigit(static_cast<unsigned char>(dict[last]))) ++last;
  if (last == first) throw InputError(".npy header: no first dimension in its shape");
  const std::string digits = std::to_string(rows);
  if (dict.compare(first, last - first, digits) == 0) return std::string(header);
  dict.replace(first, last - first, digits);
  // 2. Padding: numpy ends the dict with '\n' and pads it with spaces so
  //    that magic, version, length and dict fill a multiple of 64 bytes.
  int version = major;
  std::size_t padded = 0;
  for (;;) {
    const std::size_t head = 8 + length_field_bytes(version);
    padded = (head + dict.size() + 1 + 63) / 64 * 64 - head;
    if (version != 1 || padded <= 0xFFFF) break;
    version = 2;
  }
  dict.append(padded - dict.size() - 1, ' ');
  dict += '\n';
  std::string out(header.substr(0, 6));
  out += static_cast<char>(version);
  out += header[7];
  for (std::size_t k = 0; k < length_field_bytes(version); ++k) out += static_cast<char>((padded >> (8 * k)) & 0xFF);
  return out + dict;
}

}  // namespace extshuffle::formats
