// A record's position in its node, written just before the record when a
// split routes records one by one (docs/design.md, "Large records"): the
// bucket then holds its records in the order they were read, and whoever
// reads the bucket back puts each record where its tag says. Fixed-size
// records use every bit of a byte; framed records (lines, TFRecord frames,
// tar samples) use 7 bits a byte with the high bit set, so that a tag never
// holds a terminator, a quote, a delimiter or a NUL and the record after it
// is found by the usual scan.
#pragma once

#include <cstddef>
#include <cstdint>

namespace extshuffle::ioperm {

struct PositionTag {
  std::uint32_t width = 0;  // bytes before each record
  bool framed = false;

  // The tag of a node of `records` records: as narrow as its largest
  // position allows (3 bytes for the 2^20-record leaves of a two-level plan).
  static PositionTag for_node(std::uint64_t records, bool framed) {
    const std::uint32_t bits_per_byte = framed ? 7 : 8;
    std::uint32_t bits = 1;
    while (bits < 64 && (std::uint64_t{1} << bits) < records) ++bits;
    return PositionTag{(bits + bits_per_byte - 1) / bits_per_byte, framed};
  }

  void write(std::uint64_t position, std::byte* to) const {
    for (std::uint32_t k = 0; k < width; ++k) {
      to[k] = framed ? std::byte(0x80 | ((position >> (7 * k)) & 0x7F)) : std::byte(position >> (8 * k));
    }
  }
  std::uint64_t read(const std::byte* from) const {
    std::uint64_t position = 0;
    for (std::uint32_t k = 0; k < width; ++k) {
      const auto b = std::to_integer<std::uint64_t>(from[k]);
      position |= framed ? (b & 0x7F) << (7 * k) : b << (8 * k);
    }
    return position;
  }
};

// The sum of positions [0, count) modulo 2^64: what the tags of a node's
// records add up to when each position came once. A single damaged tag
// changes the sum (a tag out of range is caught before it is used), so
// readers of tags compare it at the end (io/scratch_damage.hpp).
inline std::uint64_t position_sum(std::uint64_t count) {
  return count % 2 == 0 ? (count / 2) * (count - 1) : count * ((count - 1) / 2);
}

}  // namespace extshuffle::ioperm
