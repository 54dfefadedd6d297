#include "extshuffle/formats/record_syntax.hpp"

#include <cstring>

#include "extshuffle/formats/tar.hpp"
#include "extshuffle/formats/tfrecord.hpp"

namespace extshuffle::formats {
const char* find_record_end(const char* begin, const char* end, const RecordSyntax& syntax, QuoteState& state) {
  if (!syntax.quoted) {
    const void* terminator = std::memchr(begin, syntax.terminator, static_cast<std::size_t>(end - begin));
    return terminator ? static_cast<const char*>(terminator) + 1 : nullptr;
  }
  const char* p = begin;
  const char* terminator = nullptr;  // the next terminator at or after p, once looked up
  while (p < end) {
    if (state == QuoteState::kQuoted) {
      // The terminator and delimiters are data here: skip to the next quote.
      const void* quote = std::memchr(p, '"', static_cast<std::size_t>(end - p));
      if (!quote) return nullptr;
      p = static_cast<const char*>(quote) + 1;
      state = QuoteState::kQuoteInQuoted;
      continue;
    }
    if (!terminator || terminator < p) {
      const void* found = std::memchr(p, syntax.terminator, static_cast<std::size_t>(end - p));
      terminator = found ? static_cast<const char*>(found) : end;
    }
    // Outside quotes only a quote changes more than the field: up to the
    // next quote (or the terminator), the last byte decides the state.
    const void* found = std::memchr(p, '"', static_cast<std::size_t>(terminator - p));
    const char* stop = found ? static_cast<const char*>(found) : terminator;
    if (stop > p) state = stop[-1] == syntax.delimiter ? QuoteState::kFieldStart : QuoteState::kUnquoted;
    if (!found) {
      if (terminator == end) return nullptr;
      state = QuoteState::kFieldStart;
      return terminator + 1;
    }
    // A quote opens a field at its start and after a closing quote (""),
    // and is an ordinary character inside an unquoted field, as Python's
    // csv module reads it.
    state = state == QuoteState::kUnquoted ? QuoteState::kUnquoted : QuoteState::kQuoted;
    p = stop + 1;
  }
  return nullptr;
}

RecordScan scan_record(const char* begin, const char* end, const RecordSyntax& syntax) {
  if (syntax.framing == Framing::kTfrecord) return {tfrecord_frame_end(begin, end), false};
  if (syntax.framing == Framing::kTarSample) return {tar_frame_end(begin, end), false};
  QuoteState state = QuoteState::kFieldStart;
  const char* record_end = find_record_end(begin, end, syntax, state);
  return {record_end, !record_end && state == QuoteState::kQuoted};
}

bool is_blank_record(const char* begin, const char* end) {
  for (const char* p = begin; p + 1 < end; ++p) {
    if (*p != ' ' && *p != '\t' && *p != '\r') return false;
  }
  return true;
}

}  // namespace extshuffle::formats
