// libFuzzer target: the text record parser (src/formats/record_syntax.cpp),
// CSV quoting and TFRecord frames above all. For any bytes and any syntax,
// records found one after the other must end inside the data, after their
// start, on the terminator (a frame: where its length says); and a scan of a
// longer buffer must find the same end (the parser may not read past a
// record's end to decide it).
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "extshuffle/formats/record_syntax.hpp"

namespace {

void check(bool condition) {
  if (!condition) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using extshuffle::formats::RecordSyntax;
  if (size < 1) return 0;
  // The first byte picks the syntax: quoted or not, NUL or newline, ',' or
  // tab, TFRecord frames or terminated records.
  RecordSyntax syntax;
  syntax.quoted = (data[0] & 1) != 0;
  syntax.terminator = (data[0] & 2) != 0 ? '\0' : '\n';
  syntax.delimiter = (data[0] & 4) != 0 ? '\t' : ',';
  const bool framed = (data[0] & 8) != 0;
  if (framed) syntax.framing = extshuffle::formats::Framing::kTfrecord;
  // A copy of exactly the bytes, so ASan sees any read past them.
  const std::vector<char> bytes(data + 1, data + size);
  const char* begin = bytes.data();
  const char* end = begin + bytes.size();
  for (const char* at = begin; at < end;) {
    const auto scan = extshuffle::formats::scan_record(at, end, syntax);
    if (!scan.end) break;
    check(scan.end > at && scan.end <= end);
    if (framed) {
      std::uint64_t length = 0;
      std::memcpy(&length, at, 8);
      check(static_cast<std::uint64_t>(scan.end - at) == length + 16);
    } else {
      check(scan.end[-1] == syntax.terminator);
    }
    // The same record inside only its own bytes ends at the same place.
    check(extshuffle::formats::scan_record(at, scan.end, syntax).end == scan.end);
    (void)extshuffle::formats::is_blank_record(at, scan.end);
    at = scan.end;
  }
  return 0;
}
