#include "extshuffle/formats/npy_rows.hpp"

#include "extshuffle/formats/npy_layout.hpp"

namespace extshuffle::formats {

std::string npy_header_with_rows(std::string_view header, std::uint64_t rows) {
  return npy_header_with_rows(header, rows, ".npy header");
}

}  // namespace extshuffle::formats
