// How text records are delimited (DESIGN.md 2.4): lines ended by a
// terminator, as GNU shuf reads them, or CSV records whose quoted fields may
// hold the terminator (RFC 4180), which a line-by-line shuffle would cut apart.
#pragma once

#include <cstddef>

namespace extshuffle::formats {

struct RecordSyntax {
  char terminator = '\n';  // '\n', or '\0' with -z
  bool quoted = false;     // --format csv: a terminator inside "..." belongs to the field
  char delimiter = ',';    // separates fields; only matters when quoted
};

struct RecordScan {
  // One past the record's terminator, or nullptr when [begin, end) holds no
  // complete record.
  const char* end = nullptr;
  // With no complete record: whether the data ends inside a quoted field
  // (at the end of the input that is an unterminated quoted field).
  bool inside_quotes = false;
};

// Scans the record that starts at `begin`. Quoting is parsed field by field
// as RFC 4180 writes it ("" is an escaped quote); a quote inside an unquoted
// field is an ordinary character, as Python's csv module reads it. Any other
// byte, invalid UTF-8 and NUL included, passes through. Cost: memchr speed
// when the record holds no quote, a byte-by-byte state machine otherwise.
RecordScan scan_record(const char* begin, const char* end, const RecordSyntax& syntax);

// Is the record [begin, end) (terminator included) blank: nothing but spaces,
// tabs and a carriage return before its terminator? (--skip-empty)
bool is_blank_record(const char* begin, const char* end);

}  // namespace extshuffle::formats
