// Finding framed records in bytes (every framing: lines, TFRecord frames,
// tar samples; "text" in the names here covers them all), as the walk's
// text layout, the output's record cutter and --repeat's record index need
// it: where a record ends, how long it is once blank records are skipped,
// and the error for an input whose record count changed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "extshuffle/errors.hpp"
#include "extshuffle/formats/record_syntax.hpp"
#include "extshuffle/io/scratch_damage.hpp"

namespace extshuffle::formats {

inline std::string records_changed_message(std::uint64_t expected) {
  return "input changed during the run: it no longer holds the " + std::to_string(expected) +
         " records counted at the start";
}

struct TextScan {
  RecordSyntax syntax;
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
  bool plain_terminators() const { return !syntax.quoted && !filter_blank && syntax.framing == Framing::kLines; }

  // The bytes of a record that starts at `begin`, `span` bytes before the
  // next one: with blank records skipped, the span also covers the blank
  // records that followed it, and the record ends at its own terminator.
  std::uint64_t record_length(const std::byte* begin, std::uint64_t span) const {
    if (!filter_blank) return span;
    const char* at = reinterpret_cast<const char*>(begin);
    return static_cast<std::uint64_t>(scan_record(at, at + span, syntax).end - at);
  }

  // Finds the record at `at` in [at, end): its end, or nullptr when
  // incomplete. Skips blank records first when filtering.
  const std::byte* next_record(const std::byte*& at, const std::byte* end) const {
    for (;;) {
      const char* begin = reinterpret_cast<const char*>(at);
      const char* stop = scan_record(begin, reinterpret_cast<const char*>(end), syntax).end;
      if (!stop) return nullptr;
      if (!filter_blank || !is_blank_record(begin, stop)) return reinterpret_cast<const std::byte*>(stop);
      at = reinterpret_cast<const std::byte*>(stop);
    }
  }
};

}  // namespace extshuffle::formats
