// Finding text records in bytes, as the text layout needs it in several
// places: where a record ends, how long it is once blank records are
// skipped, and the error for an input whose record count changed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "extshuffle/errors.hpp"
#include "extshuffle/formats/record_syntax.hpp"
#include "ioperm/position_tag.hpp"

namespace extshuffle::ioperm {

struct TextScan {
  formats::RecordSyntax syntax;
  bool filter_blank = false;  // --skip-empty, at the root only: blank records are not records

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
// Throws InputError if the bytes are not such records (scratch space
// corrupted).
inline void locate_tagged_records(const std::byte* bytes, std::uint64_t size, std::uint64_t count,
                                  const PositionTag& tag, const TextScan& scan, std::uint64_t* offsets,
                                  std::uint32_t* lengths) {
  const std::byte* at = bytes;
  const std::byte* end = bytes + size;
  for (std::uint64_t k = 0; k < count; ++k) {
    const std::byte* record = at + tag.width;
    const std::byte* stop = record <= end ? scan.next_record(record, end) : nullptr;
    const std::uint64_t t = stop ? tag.read(at) : count;
    if (t >= count) throw InputError("scratch space holds records that are not what was written");
    offsets[t] = static_cast<std::uint64_t>(record - bytes);
    lengths[t] = static_cast<std::uint32_t>(stop - record);
    at = stop;
  }
  if (at != end) throw InputError("scratch space holds records that are not what was written");
}

inline std::string records_changed_message(std::uint64_t expected) {
  return "input changed during the run: it no longer holds the " + std::to_string(expected) +
         " records counted at the start";
}

}  // namespace extshuffle::ioperm
