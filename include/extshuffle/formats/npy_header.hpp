// The header of a NumPy .npy file (format versions 1.0, 2.0 and 3.0): what
// extshuffle needs to shuffle an array along axis 0 without touching the
// header. The format is numpy's own (numpy.lib.format); its header is a
// Python dict literal with keys 'descr', 'fortran_order' and 'shape'.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace extshuffle::formats {

// ".npy files start with \x93NUMPY".
inline constexpr std::string_view kNpyMagic{"\x93NUMPY", 6};

struct NpyHeader {
  int major_version = 0;
  std::uint64_t header_bytes = 0;  // magic, version, length and dict: where the data starts
  std::string descr;                // the dtype as written, e.g. "<f4" or "[('x', '<f8'), ...]"
  std::uint64_t item_bytes = 0;     // numpy's itemsize of descr
  std::vector<std::uint64_t> shape;
  std::uint64_t rows = 0;           // shape[0]
  std::uint64_t row_bytes = 0;      // product of the other dimensions x item_bytes
};

bool starts_with_npy_magic(std::string_view head);

// Bytes of the whole header (where the data starts), from its first 12 bytes.
std::uint64_t parse_npy_header_size(std::string_view head);

// Parses the header from the first bytes of the file (`head` must hold at
// least the whole header; 64 KiB always does for real files). Throws
// InputError with a one-line reason: truncated or malformed header, Fortran
// order, object dtype, a 0-dimensional array.
NpyHeader parse_npy_header(std::string_view head, const std::string& name);

// Bytes of one element of a numpy dtype description ("<f4", "|S10", "<U3",
// "V16", "<M8[ns]", or a structured list of (name, dtype[, shape]) tuples).
// Throws InputError for object dtypes and for what it does not understand.
std::uint64_t npy_item_bytes(std::string_view descr, const std::string& name);

}  // namespace extshuffle::formats
