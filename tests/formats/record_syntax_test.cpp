// Where one text record ends (formats/record_syntax.hpp): plain lines as GNU
// shuf cuts them, and CSV records whose quoted fields may hold the
// terminator and the delimiter (RFC 4180). Every byte that is not syntax,
// invalid UTF-8 and NUL included, must pass through as data.
#include "extshuffle/formats/record_syntax.hpp"

#include <gtest/gtest.h>

#include "extshuffle/formats/format_detection.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace extshuffle::formats::record_syntax_test {
namespace {

const RecordSyntax kLines{'\n', false, ','};
const RecordSyntax kZeroLines{'\0', false, ','};
const RecordSyntax kCsv{'\n', true, ','};
const RecordSyntax kTabQuoted{'\n', true, '\t'};

// Length of the first record of `text` (terminator included), or -1 when
// the text holds no complete record.
long record_length(const std::string& text, const RecordSyntax& syntax) {
  const RecordScan scan = scan_record(text.data(), text.data() + text.size(), syntax);
  return scan.end ? static_cast<long>(scan.end - text.data()) : -1;
}

bool ends_inside_quotes(const std::string& text, const RecordSyntax& syntax) {
  return scan_record(text.data(), text.data() + text.size(), syntax).inside_quotes;
}

bool blank(const std::string& record) { return is_blank_record(record.data(), record.data() + record.size()); }

TEST(ScanRecord, LineEndsAtItsNewline) {
  EXPECT_EQ(record_length("a,b\nc\n", kLines), 4);
  EXPECT_EQ(record_length("\nx\n", kLines), 1);  // an empty line is a record of its own
  EXPECT_EQ(record_length("no newline", kLines), -1);
  EXPECT_EQ(record_length("", kLines), -1);
  EXPECT_FALSE(ends_inside_quotes("no newline", kLines));
}

// Without CSV quoting a quote is an ordinary byte: shuf cuts at the newline.
TEST(ScanRecord, LinesIgnoreQuotes) {
  EXPECT_EQ(record_length("\"a\nb\"\n", kLines), 3);
  EXPECT_FALSE(ends_inside_quotes("\"open", kLines));
}

// -z: NUL ends the record and a newline is data, as shuf -z reads it.
TEST(ScanRecord, NulTerminatorMakesNewlinesData) {
  EXPECT_EQ(record_length(std::string("a\nb\0c\0", 6), kZeroLines), 4);
  EXPECT_EQ(record_length("a\nb\n", kZeroLines), -1);
}

// CRLF files: the carriage return stays part of the record, in both modes.
TEST(ScanRecord, CarriageReturnStaysInTheRecord) {
  EXPECT_EQ(record_length("a,b\r\nc,d\r\n", kLines), 5);
  EXPECT_EQ(record_length("a,b\r\nc,d\r\n", kCsv), 5);
  EXPECT_EQ(record_length("\"x\r\ny\",z\r\nnext\r\n", kCsv), 10);  // a quoted CRLF is data
}

TEST(ScanRecord, CsvWithoutQuotesEndsAtTheNewline) {
  EXPECT_EQ(record_length("a,b,c\nd,e,f\n", kCsv), 6);
  EXPECT_EQ(record_length("a,b,c", kCsv), -1);
  EXPECT_FALSE(ends_inside_quotes("a,b,c", kCsv));
}

// A quote after the record's terminator belongs to the next record: the
// memchr fast path must not look past the terminator for quotes.
TEST(ScanRecord, QuoteInTheNextRecordDoesNotMatter) {
  EXPECT_EQ(record_length("abc\n\"de\nf\"\n", kCsv), 4);
}

TEST(ScanRecord, QuotedFieldHoldsNewlinesAndDelimiters) {
  EXPECT_EQ(record_length("\"x\ny\",z\nrest\n", kCsv), 8);
  EXPECT_EQ(record_length("a,\"b\nc\",d\nrest\n", kCsv), 10);  // a quoted field after a delimiter
  EXPECT_EQ(record_length("\"a,b\",c\n", kCsv), 8);
  EXPECT_EQ(record_length("\"\n\n\n\"\n", kCsv), 6);  // nothing but newlines inside the quotes
  EXPECT_EQ(record_length("\"\",\"\"\n", kCsv), 6);   // two empty quoted fields
}

// RFC 4180: "" inside a quoted field is one quote and does not close it.
TEST(ScanRecord, DoubledQuoteIsEscaped) {
  EXPECT_EQ(record_length("\"a\"\"b\",c\nnext\n", kCsv), 9);
  // The escaped quote comes right before a newline that is still inside the field.
  EXPECT_EQ(record_length("\"he said \"\"hi\n\"\"\"\nnext\n", kCsv), 18);
  EXPECT_EQ(record_length("\"\"\"\"\n", kCsv), 5);  // a field holding one quote
}

// As Python's csv module reads it: a quote that does not open a field is a
// literal character and does not start quoting.
TEST(ScanRecord, QuoteInsideAnUnquotedFieldIsLiteral) {
  EXPECT_EQ(record_length("ab\"c,d\n\"e\"\n", kCsv), 7);
  EXPECT_EQ(record_length("x,5\" screen\ny\n", kCsv), 12);
  // Text after a closing quote continues the field without reopening quotes.
  EXPECT_EQ(record_length("\"a\"b\"c\nd\n", kCsv), 7);
}

// The delimiter decides where a field (and so a quoted field) may start.
TEST(ScanRecord, OnlyTheConfiguredDelimiterStartsAField) {
  EXPECT_EQ(record_length("a\t\"b\nc\"\td\n", kTabQuoted), 10);
  // With tab as the delimiter, a quote after a comma is inside an unquoted field.
  EXPECT_EQ(record_length("a,\"b\nc\"\n", kTabQuoted), 5);
}

TEST(ScanRecord, QuotedRecordsWithNulTerminator) {
  const RecordSyntax zero_csv{'\0', true, ','};
  const std::string text("\"a\0b\",c\0next\0", 13);
  EXPECT_EQ(record_length(text, zero_csv), 8);
}

// Unterminated quoted fields: reported so that the counting pass can name
// them; a closed quote at the end of the data is merely an incomplete record.
TEST(ScanRecord, UnterminatedQuotedFieldIsReported) {
  EXPECT_EQ(record_length("\"abc\ndef", kCsv), -1);
  EXPECT_TRUE(ends_inside_quotes("\"abc\ndef", kCsv));
  EXPECT_TRUE(ends_inside_quotes("a,\"b", kCsv));
  EXPECT_TRUE(ends_inside_quotes("\"abc\"\"", kCsv));  // the last quote is escaped: still open
  EXPECT_TRUE(ends_inside_quotes("\"", kCsv));
  EXPECT_FALSE(ends_inside_quotes("\"abc\"", kCsv));   // closed, only the terminator is missing
  EXPECT_EQ(record_length("\"abc\"", kCsv), -1);
  EXPECT_FALSE(ends_inside_quotes("a\"b", kCsv));      // a literal quote opens nothing
}

// Bytes that are not syntax pass through: invalid UTF-8, NUL in a newline
// record, any high byte, in both modes.
TEST(ScanRecord, InvalidUtf8AndNulBytesAreData) {
  const std::string line("\xff\xfe\xc3(\0x,\x80\n\xc0\n", 11);
  EXPECT_EQ(record_length(line, kLines), 9);
  EXPECT_EQ(record_length(line, kCsv), 9);
  const std::string quoted("\"\xff\0\n\xfe\"\n", 7);
  EXPECT_EQ(record_length(quoted, kCsv), 7);
}

TEST(ScanRecord, LongRecordWithQuotesFarFromTheStart) {
  const std::string field(100000, 'x');
  const std::string text = field + ",\"" + field + "\n" + field + "\"\nnext\n";
  EXPECT_EQ(record_length(text, kCsv), static_cast<long>(3 * field.size() + 5));
  EXPECT_EQ(record_length(text, kLines), static_cast<long>(2 * field.size() + 3));
}

// The quoting rules written out byte by byte, as RFC 4180 and Python's csv
// module read them: the reference for the resumable scan below.
QuoteState step(QuoteState state, char c, const RecordSyntax& syntax, bool& record_ends) {
  record_ends = false;
  switch (state) {
    case QuoteState::kQuoted:
      return c == '"' ? QuoteState::kQuoteInQuoted : QuoteState::kQuoted;
    case QuoteState::kFieldStart:
    case QuoteState::kUnquoted:
    case QuoteState::kQuoteInQuoted:
      if (c == syntax.terminator) {
        record_ends = true;
        return QuoteState::kFieldStart;
      }
      if (c == syntax.delimiter) return QuoteState::kFieldStart;
      if (c == '"' && state != QuoteState::kUnquoted) return QuoteState::kQuoted;
      return QuoteState::kUnquoted;
  }
  return state;
}

// find_record_end from every starting state, resumed across random buffer
// cuts, finds the same record ends and the same final state as the byte by
// byte reference, on random text over the syntax's own characters.
TEST(FindRecordEnd, ResumesFromAnyStateAcrossAnyCuts) {
  std::uint64_t x = 12345;
  auto next = [&] {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<std::uint32_t>(x >> 33);
  };
  const char alphabet[] = {'a', ',', '"', '\n', 'b', '"'};
  for (const RecordSyntax& syntax : {kCsv, kLines}) {
    for (int trial = 0; trial < 2000; ++trial) {
      std::string text(next() % 40, ' ');
      for (char& c : text) c = alphabet[next() % sizeof alphabet];
      for (int s = 0; s < 4; ++s) {
        const auto start = static_cast<QuoteState>(s);
        if (!syntax.quoted && start != QuoteState::kFieldStart) continue;
        std::vector<std::size_t> expected_ends;
        QuoteState expected = start;
        for (std::size_t k = 0; k < text.size(); ++k) {
          bool ends = false;
          expected = syntax.quoted ? step(expected, text[k], syntax, ends) : expected;
          if (!syntax.quoted) ends = text[k] == syntax.terminator;
          if (ends) expected_ends.push_back(k + 1);
        }
        std::vector<std::size_t> ends;
        QuoteState state = start;
        const char* p = text.data();
        const char* const end = text.data() + text.size();
        while (p < end) {
          const char* cut = p + next() % (static_cast<std::size_t>(end - p) + 1);
          const char* found = find_record_end(p, cut, syntax, state);
          if (found) ends.push_back(static_cast<std::size_t>(found - text.data()));
          p = found ? found : cut;
        }
        EXPECT_EQ(ends, expected_ends) << text << " from state " << s;
        EXPECT_EQ(state, expected) << text << " from state " << s;
      }
    }
  }
}

TEST(IsBlankRecord, WhitespaceOnlyRecordsAreBlank) {
  EXPECT_TRUE(blank("\n"));
  EXPECT_TRUE(blank("   \n"));
  EXPECT_TRUE(blank(" \t \r\n"));
  EXPECT_TRUE(blank("\r\n"));
  EXPECT_TRUE(blank(std::string("\0", 1)));        // -z: an empty record
  EXPECT_TRUE(blank(std::string(" \t\0", 3)));
}

TEST(IsBlankRecord, AnythingElseIsNotBlank) {
  EXPECT_FALSE(blank("a\n"));
  EXPECT_FALSE(blank("  x  \n"));
  EXPECT_FALSE(blank("\"\"\n"));                     // an empty quoted CSV field is a value
  EXPECT_FALSE(blank(",\n"));                       // a CSV row of empty fields: the comma is data
  EXPECT_FALSE(blank(std::string(" \0 \n", 4)));    // NUL inside a newline record is data
  EXPECT_FALSE(blank(std::string(" \n \0", 4)));    // with -z a newline is data, not blank
  EXPECT_FALSE(blank("\v\n"));                      // only space, tab and CR count as blank
}

// The framing is the one place that says how a framed record is delimited:
// every format of lines frames by its terminator, TFRecord and tar by their
// frames, and the detected kind and the syntax both answer from it.
TEST(Framing, EachFormatHasOneAndTheSyntaxCarriesIt) {
  for (const Format format : {Format::kLines, Format::kCsv, Format::kTsv, Format::kJsonl}) {
    EXPECT_EQ(framing_of(format), Framing::kLines) << static_cast<int>(format);
    EXPECT_EQ(framed_syntax(format, false).framing, Framing::kLines);
    const DetectedFormat d = detect_format(format, 0, false, "a", "x\n", "'a'");
    EXPECT_EQ(d.kind, RecordKind::kFramed);
    EXPECT_EQ(d.framing(), Framing::kLines);
  }
  EXPECT_EQ(framing_of(Format::kTfrecord), Framing::kTfrecord);
  EXPECT_EQ(framing_of(Format::kTar), Framing::kTarSample);
  const DetectedFormat tar = detect_format(Format::kAuto, 0, false, "shard-0.tar.zst", "", "'shard-0.tar.zst'");
  EXPECT_EQ(tar.kind, RecordKind::kFramed);
  EXPECT_EQ(tar.framing(), Framing::kTarSample);
  EXPECT_EQ(framed_syntax(Format::kTar, false).framing, Framing::kTarSample);
  // Lines by default; fixed-size records and .npy rows are not framed.
  EXPECT_EQ(detect_format(Format::kAuto, 0, false, "a", "x\n", "'a'").framing(), Framing::kLines);
  EXPECT_EQ(detect_format(Format::kAuto, 8, false, "a.bin", "", "'a.bin'").kind, RecordKind::kFixed);
  // A line of CSV is one record though its quoted field holds the terminator.
  const std::string quoted = "\"a\nb\",c\nd\n";
  EXPECT_EQ(record_length(quoted, framed_syntax(Format::kCsv, false)), 8);
  EXPECT_EQ(record_length(quoted, framed_syntax(Format::kTsv, false)), 3);
}

// Each word of kFormatWords names its own Format, in the enum's order (the
// CLI's --format and Python's format= read them); nothing else names one.
TEST(FormatWords, EachWordNamesItsFormatAndNoOtherWordDoes) {
  const std::vector<std::string> words = {"auto", "binary", "lines", "csv", "tsv", "jsonl", "tfrecord", "tar"};
  std::string joined;
  for (std::size_t k = 0; k < words.size(); ++k) {
    joined += (k == 0 ? "" : ",") + words[k];
    const std::optional<Format> format = format_named(words[k]);
    ASSERT_TRUE(format.has_value()) << words[k];
    EXPECT_EQ(static_cast<std::size_t>(*format), k) << words[k];
  }
  EXPECT_EQ(joined, kFormatWords);
  for (const char* other : {"", "npy", "Lines", "line", "tar,", "auto,binary", " csv"}) {
    EXPECT_FALSE(format_named(other).has_value()) << other;
  }
}

}  // namespace
}  // namespace extshuffle::formats::record_syntax_test
