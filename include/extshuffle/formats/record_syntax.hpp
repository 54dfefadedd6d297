// How variable-size records are delimited (docs/conventions.md, Record formats): lines ended by a
// terminator, as GNU shuf reads them, CSV records whose quoted fields may
// hold the terminator (RFC 4180), which a line-by-line shuffle would cut
// apart, or TFRecord frames, which end where their length field says.
#pragma once

#include <cstddef>

namespace extshuffle::formats {

// kLines: a record ends at its terminator (lines, CSV, TSV, JSONL).
// kTfrecord: a record is one TFRecord frame (formats/tfrecord.hpp); the
// terminator, quoting and the delimiter play no part.
// kTarSample: a record is one tar sample in its frame (formats/tar.hpp).
enum class Framing { kLines, kTfrecord, kTarSample };

struct RecordSyntax {
  char terminator = '\n';  // '\n', or '\0' with -z
  bool quoted = false;     // --format csv: a terminator inside "..." belongs to the field
  char delimiter = ',';    // separates fields; only matters when quoted
  Framing framing = Framing::kLines;
};

struct RecordScan {
  // One past the record's terminator (a frame: its data CRC), or nullptr
  // when [begin, end) holds no complete record.
  const char* end = nullptr;
  // With no complete record: whether the data ends inside a quoted field
  // (at the end of the input that is an unterminated quoted field).
  bool inside_quotes = false;
};

// Scans the record that starts at `begin`. Quoting is parsed field by field
// as RFC 4180 writes it ("" is an escaped quote); a quote inside an unquoted
// field is an ordinary character, as Python's csv module reads it. Any other
// byte, invalid UTF-8 and NUL included, passes through. Cost: memchr speed
// when the record holds no quote, a byte-by-byte state machine otherwise; a
// TFRecord frame's end is read from its length field (its CRCs are not
// checked here: see check_tfrecord_frame()).
RecordScan scan_record(const char* begin, const char* end, const RecordSyntax& syntax);

// Where a CSV scan stands inside a record: at the start of a field, inside an
// unquoted field, inside a quoted field, or just after a quote inside a quoted
// field (its closing quote, or the first of "").
enum class QuoteState : unsigned char { kFieldStart, kUnquoted, kQuoted, kQuoteInQuoted };

// Continues a scan that stands in `state` at `begin` (kFieldStart at a
// record's start): returns one past the next terminator that ends a record
// (`state` is then kFieldStart), or nullptr when [begin, end) holds none
// (`state` is then the state at `end`). So a scan can go on across buffers,
// and start anywhere in an input from an assumed state (an MPI rank that
// reads from the middle of a file tries each). Without quoting every
// terminator ends a record. The one definition of the quoting rules:
// scan_record() is this from kFieldStart. Cost: memchr speed outside quoted
// fields, memchr for the closing quote inside them.
const char* find_record_end(const char* begin, const char* end, const RecordSyntax& syntax, QuoteState& state);

// Is the record [begin, end) (terminator included) blank: nothing but spaces,
// tabs and a carriage return before its terminator? (--skip-empty)
bool is_blank_record(const char* begin, const char* end);

}  // namespace extshuffle::formats
