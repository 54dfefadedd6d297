// Where the rows of a .npy array lie in its file (docs/conventions.md, Record formats): after the
// header, which the output repeats unchanged, as fixed-size records of one
// row each, shuffled along axis 0.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace extshuffle::formats {

struct NpyLayout {
  std::uint64_t data_offset = 0;  // bytes of the header: where the rows start
  std::size_t record_size = 1;    // bytes of one row (1 for rows of no bytes, which leave nothing to move)
  std::uint64_t records = 0;      // rows to shuffle
  std::string header;             // written to the output before the shuffled rows
};

// How many bytes of the input's start npy_layout() needs, given its first
// bytes `head` (which start with the .npy magic) and the input's size: the
// whole header, which may be longer than `head` (numpy writes a few hundred
// bytes; a 64 KiB probe holds every real one). Never more than
// `input_bytes`; `head.size()` when that already suffices or the header is
// unreadable (npy_layout then says why).
std::uint64_t npy_head_bytes(std::string_view head, std::uint64_t input_bytes);

// The layout of a .npy input of `input_bytes` bytes whose first bytes are
// `head` (at least npy_head_bytes() of them). `record_size`: --record-size,
// 0 when not given. Throws InputError (malformed header, data whose length
// does not match the shape and dtype) and UsageError (--record-size not the
// row size), naming the input `display_name`. Cost: parsing the header.
NpyLayout npy_layout(std::string_view head, std::uint64_t input_bytes, std::size_t record_size,
                     const std::string& display_name);

// The .npy header `header` (a whole header, as NpyLayout::header holds it)
// with its shape's first extent set to `rows` (of the last 'shape' key,
// the one NumPy reads), everything else as written: the header of `rows`
// rows of the same array (-n K, a shard, arrays concatenated). Padded with
// spaces to a multiple of 64 bytes as numpy writes it; version 1.0 becomes
// 2.0 only if the dict outgrows its 2-byte length; `header` itself when it
// says `rows` already. Throws InputError naming `display_name` if the
// header holds no shape.
std::string npy_header_with_rows(std::string_view header, std::uint64_t rows, const std::string& display_name);

}  // namespace extshuffle::formats
