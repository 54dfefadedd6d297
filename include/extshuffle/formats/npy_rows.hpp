// The .npy header of an array like another but with a different number of
// rows (axis 0): the header of a shard, of the first K rows (-n), or of
// several arrays concatenated along axis 0 (DESIGN.md 2.5, datasets).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace extshuffle::formats {

// `header` (a whole, valid .npy header: magic, version, length, dict, as
// npy_layout() returns it) with the first dimension of its shape replaced by
// `rows`, padded with spaces so that the data starts at a multiple of 64
// bytes, as numpy writes it; the dict is otherwise kept as written. Returns
// `header` unchanged when it already says `rows`. A version 1.0 header that
// outgrows its 2-byte length becomes version 2.0. Throws InputError when the
// dict holds no shape tuple. Cost: a copy of the header.
std::string npy_header_with_rows(std::string_view header, std::uint64_t rows);

}  // namespace extshuffle::formats
