// Finding text records in bytes, as the text layout needs it in several
// places: where a record ends, how long it is once blank records are
// skipped, and the error for an input whose record count changed.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include "extshuffle/errors.hpp"
#include "extshuffle/formats/record_syntax.hpp"
#include "extshuffle/io/scratch_damage.hpp"
#include "ioperm/position_tag.hpp"

namespace extshuffle::ioperm {

inline std::string records_changed_message(std::uint64_t expected) {
  return "input changed during the run: it no longer holds the " + std::to_string(expected) +
         " records counted at the start";
}

struct TextScan {
  formats::RecordSyntax syntax;
  bool filter_blank = false;  // --skip-empty, at the root only: blank records are not records
  // The bytes are read back from scratch space (every node below the root,
  // and a root whose inputs are all spooled):
  // records other than the node's count there mean damaged scratch, not a
  // changed input.
  bool from_scratch = false;

  // The error for bytes that do not hold the `expected` records counted.
  [[noreturn]] void throw_records_changed(std::uint64_t expected) const {
    if (from_scratch) io::throw_scratch_damaged();
    throw InputError(records_changed_message(expected));
  }

  // Records end at every terminator, so they can be found in bulk
  // (terminator_scan.hpp); never so for TFRecord frames.
  bool plain_terminators() const {
    return !syntax.quoted && !filter_blank && syntax.framing == formats::RecordFraming::kTerminated;
  }

  // The bytes of a record that starts at `begin`, `span` bytes before the
  // next one: with blank records skipped, the span also covers the blank
  // records that followed it, and the record ends at its own terminator.
  std::uint64_t record_length(const std::byte* begin, std::uint64_t span) const {
    if (!filter_blank) return span;
    const char* at = reinterpret_cast<const char*>(begin);
    return static_cast<std::uint64_t>(formats::scan_record(at, at + span, syntax).end - at);
  }

  // Finds the record at `at` in [at, end): its end, or nullptr when
  // incomplete. Skips blank records first when filtering.
  const std::byte* next_record(const std::byte*& at, const std::byte* end) const {
    for (;;) {
      const char* begin = reinterpret_cast<const char*>(at);
      const char* stop = formats::scan_record(begin, reinterpret_cast<const char*>(end), syntax).end;
      if (!stop) return nullptr;
      if (!filter_blank || !formats::is_blank_record(begin, stop)) return reinterpret_cast<const std::byte*>(stop);
      at = reinterpret_cast<const std::byte*>(stop);
    }
  }
};

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
