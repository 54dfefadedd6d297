// The .npy header of an array like another but with a different number of
// rows (axis 0): the header of a shard, of the first K rows (-n), or of
// several arrays concatenated along axis 0 (docs/conventions.md, Record formats, datasets).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace extshuffle::formats {

// `header` (a whole, valid .npy header: magic, version, length, dict, as
// npy_layout() returns it) with the first dimension of its shape replaced by
// `rows`: formats/npy_layout.hpp's, its errors naming ".npy header".
std::string npy_header_with_rows(std::string_view header, std::uint64_t rows);

}  // namespace extshuffle::formats
