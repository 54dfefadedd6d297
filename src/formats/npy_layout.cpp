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

}  // namespace extshuffle::formats
