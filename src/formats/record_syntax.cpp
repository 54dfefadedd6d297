#include "extshuffle/formats/record_syntax.hpp"

#include <cstring>

#include "extshuffle/formats/tfrecord.hpp"

namespace extshuffle::formats {
namespace {

enum class FieldState { kStart, kUnquoted, kQuoted, kQuoteInQuoted };

RecordScan scan_quoted(const char* begin, const char* end, const RecordSyntax& syntax) {
  FieldState state = FieldState::kStart;
  for (const char* p = begin; p < end; ++p) {
    const char c = *p;
    switch (state) {
      case FieldState::kStart:
      case FieldState::kUnquoted:
      case FieldState::kQuoteInQuoted:
        if (c == syntax.terminator) return {p + 1, false};
        if (c == syntax.delimiter) {
          state = FieldState::kStart;
        } else if (c == '"' && state == FieldState::kStart) {
          state = FieldState::kQuoted;
        } else if (c == '"' && state == FieldState::kQuoteInQuoted) {
          state = FieldState::kQuoted;  // "" inside a quoted field
        } else {
          state = FieldState::kUnquoted;
        }
        break;
      case FieldState::kQuoted:
        if (c == '"') {
          state = FieldState::kQuoteInQuoted;
        } else {
          // Skip to the next quote: the terminator and delimiters are data here.
          const void* quote = std::memchr(p, '"', static_cast<std::size_t>(end - p));
          if (!quote) return {nullptr, true};
          p = static_cast<const char*>(quote) - 1;
        }
        break;
    }
  }
  return {nullptr, state == FieldState::kQuoted};
}

}  // namespace

RecordScan scan_record(const char* begin, const char* end, const RecordSyntax& syntax) {
  if (syntax.framing == RecordFraming::kTfrecord) return {tfrecord_frame_end(begin, end), false};
  const auto size = static_cast<std::size_t>(end - begin);
  const void* terminator = std::memchr(begin, syntax.terminator, size);
  if (!syntax.quoted) return {terminator ? static_cast<const char*>(terminator) + 1 : nullptr, false};
  // Most CSV records hold no quote before their terminator: memchr decides.
  const char* stop = terminator ? static_cast<const char*>(terminator) : end;
  if (!std::memchr(begin, '"', static_cast<std::size_t>(stop - begin))) return {terminator ? stop + 1 : nullptr, false};
  return scan_quoted(begin, end, syntax);
}

bool is_blank_record(const char* begin, const char* end) {
  for (const char* p = begin; p + 1 < end; ++p) {
    if (*p != ' ' && *p != '\t' && *p != '\r') return false;
  }
  return true;
}

}  // namespace extshuffle::formats
