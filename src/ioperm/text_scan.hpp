// Text records behind position tags, as a routed split leaves them in
// scratch space; the scan itself is the formats' (formats/text_scan.hpp).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "extshuffle/formats/text_scan.hpp"
#include "extshuffle/io/scratch_damage.hpp"
#include "ioperm/position_tag.hpp"

namespace extshuffle::ioperm {

using formats::records_changed_message;
using formats::TextScan;

// The `count` records of a text node that a routed split filled, each
// after its position tag, in `size` bytes at `bytes`: where record t of the
// node starts (offsets[t], from bytes) and how long it is (lengths[t]).
// Throws Error (io/scratch_damage.hpp) unless the bytes are such
// records, each tag below `count` and no two alike (every place filled
// once: a place left unfilled would send the gather to whatever its
// offset held).
inline void locate_tagged_records(const std::byte* bytes, std::uint64_t size, std::uint64_t count,
                                  const PositionTag& tag, const TextScan& scan, std::uint64_t* offsets,
                                  std::uint32_t* lengths) {
  constexpr std::uint32_t kUnplaced = UINT32_MAX;  // no record's length: records are under 4 GiB
  std::fill(lengths, lengths + count, kUnplaced);
  const std::byte* at = bytes;
  const std::byte* end = bytes + size;
  for (std::uint64_t k = 0; k < count; ++k) {
    const std::byte* record = at + tag.width;
    const std::byte* stop = tag.width <= static_cast<std::uint64_t>(end - at) ? scan.next_record(record, end) : nullptr;
    const std::uint64_t t = stop ? tag.read(at) : count;
    if (t >= count || lengths[t] != kUnplaced) io::throw_scratch_damaged();
    offsets[t] = static_cast<std::uint64_t>(record - bytes);
    lengths[t] = static_cast<std::uint32_t>(stop - record);
    at = stop;
  }
  if (at != end) io::throw_scratch_damaged();
}

}  // namespace extshuffle::ioperm
