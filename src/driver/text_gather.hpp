// Text records of one chunk or leaf too large for memory, in shuffled order,
// window by window (DESIGN.md 2.3, "gathered by index"): one pass finds the
// records, then each window of consecutive shuffled positions takes one
// sequential pass over the chunk.
#pragma once

#include <cstdint>

#include "extshuffle/core/variable_philox.hpp"
#include "extshuffle/io/byte_extents.hpp"
#include "record_layout.hpp"
#include "text_scan.hpp"

namespace extshuffle::driver {

// Bytes of the arrays a gather of m records needs: record offsets and
// lengths, the permutation, its inverse, and a window's position offsets.
std::uint64_t text_gather_arrays_bytes(std::uint64_t m);

// Hands the m records that start at byte `start` of `data` to `on_window` in
// the order of `f`, using `arrays` (text_gather_arrays_bytes(m) bytes) and
// `space` (`space_bytes`, for reading and the window). Returns the byte
// where the chunk ends. Throws InputError for a record larger than the
// window (`budget` names the --memory in the message) or a changed input.
std::uint64_t text_gather_in_windows(const io::ByteExtents& data, std::uint64_t start, std::uint64_t m,
                                     const core::VariablePhilox& f, const TextScan& scan, std::byte* arrays,
                                     std::byte* space, std::uint64_t space_bytes, std::uint64_t budget,
                                     RunContext& ctx, const OnWindow& on_window);

[[noreturn]] void throw_record_too_large(std::uint64_t bytes, std::uint64_t budget);

}  // namespace extshuffle::driver
