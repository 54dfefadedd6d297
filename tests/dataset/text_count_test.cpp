// The counting pass (src/dataset/text_input.cpp) on its own: random inputs
// are built from records known in advance (lines, CSV records whose quoted
// fields hold terminators, TFRecord frames), and the count, the header's
// bytes, the longest record, the squares, the digest and whether a
// terminator is added must match them, read from a file at an offset and
// from memory, in the bulk count of terminators and record by record.
// Inputs over the pass's 2 MiB pieces and 8 MiB mapped pieces, and one
// record longer than a piece, make the pass refill and grow its buffer.
// Deterministic: the inputs come from fixed seeds.
#include "extshuffle/dataset/text_input.hpp"

#include <gtest/gtest.h>

#include <optional>
#include <random>
#include <string>
#include <vector>

#include "extshuffle/dataset/record_digest.hpp"
#include "extshuffle/errors.hpp"
#include "extshuffle/formats/tfrecord.hpp"
#include "extshuffle/io/block_file.hpp"
#include "extshuffle/io/mapped_bytes.hpp"
#include "support/command.hpp"

namespace extshuffle::dataset::text_count_test {
namespace {

// An input and the records it holds, each as the output will carry it
// (a last record without its terminator gets one).
struct Input {
  std::string bytes;
  std::vector<std::string> records;
};

bool blank(const std::string& record) {
  for (std::size_t k = 0; k + 1 < record.size(); ++k) {
    if (record[k] != ' ' && record[k] != '\t' && record[k] != '\r') return false;
  }
  return true;
}

std::string random_field(std::mt19937_64& random, bool quoted, std::size_t longest) {
  static const std::string kPlain = "abcxyz019 \t\r";
  static const std::string kQuoted = "ab,\n\"\" \r";  // "" stands for an escaped quote
  std::string field;
  const std::size_t length = std::uniform_int_distribution<std::size_t>(0, longest)(random);
  const std::string& from = quoted ? kQuoted : kPlain;
  for (std::size_t k = 0; k < length; ++k) {
    const char c = from[random() % from.size()];
    field += c;
    if (quoted && c == '"') field += '"';
  }
  return quoted ? "\"" + field + "\"" : field;
}

// `records` records of up to `longest` bytes, CSV ones with quoted fields
// holding terminators when `csv`, some blank; the last one without its
// terminator when `unterminated`.
Input random_text(std::uint64_t seed, std::size_t records, std::size_t longest, bool csv, bool unterminated) {
  std::mt19937_64 random(seed);
  Input input;
  for (std::size_t r = 0; r < records; ++r) {
    std::string record;
    if (random() % 8 == 0) {
      record = random() % 2 ? "" : " \t\r";
    } else {
      const int fields = csv ? 1 + static_cast<int>(random() % 4) : 1;
      for (int f = 0; f < fields; ++f) {
        if (f > 0) record += ',';
        record += random_field(random, csv && random() % 2 == 0, longest / fields);
      }
    }
    record += '\n';
    input.bytes += record;
    input.records.push_back(record);
  }
  if (unterminated && !input.bytes.empty()) {
    std::string& last = input.records.back();
    if (last == "\n") {  // an empty unterminated last record would be no record at all
      last = "x\n";
      input.bytes.back() = 'x';
    } else {
      input.bytes.pop_back();
    }
  }
  return input;
}

// The count that the pass must find for `input` with its first
// `header_records` records as the header.
TextCount expected_count(const Input& input, std::uint64_t header_records, bool skip_blank, bool framed,
                         RecordDigest* digest) {
  TextCount count;
  for (std::size_t r = 0; r < input.records.size(); ++r) {
    const std::string& record = input.records[r];
    if (r < header_records) {
      count.header_bytes = std::min<std::uint64_t>(count.header_bytes + record.size(), input.bytes.size());
      continue;
    }
    if (skip_blank && blank(record)) continue;
    ++count.records;
    count.longest_record_bytes = std::max<std::uint64_t>(count.longest_record_bytes, record.size());
    count.record_bytes_squared += static_cast<double>(record.size()) * static_cast<double>(record.size());
    if (digest) digest->add(reinterpret_cast<const std::byte*>(record.data()), record.size());
  }
  if (skip_blank) {
    count.longest_record_bytes = std::max(count.longest_record_bytes, input.bytes.size() - count.header_bytes);
  }
  count.add_terminator = !framed && !input.bytes.empty() && input.bytes.back() != '\n';
  return count;
}

class TextCountTest : public ::testing::Test {
 protected:
  // Counts `input` both ways: from a file, behind `kOffset` bytes of
  // something else, and from memory; the two must agree with `expected`.
  void expect_count(const Input& input, const formats::RecordSyntax& syntax, std::uint64_t header_records,
                    bool skip_blank, bool with_digest, const std::string& where) {
    const bool framed = syntax.framing != formats::Framing::kLines;
    RecordDigest expected_digest;
    const TextCount expected =
        expected_count(input, header_records, skip_blank, framed, with_digest ? &expected_digest : nullptr);
    const std::string path = (dir_.path() / "input").string();
    testing::write_file(path, std::string(kOffset, '\n') + input.bytes);
    const auto file = io::BlockFile::open_input(path);
    for (const bool mapped : {false, true}) {
      RecordDigest digest;
      const auto* memory = reinterpret_cast<const std::byte*>(input.bytes.data());
      const TextCount got = count_text_records(*file, kOffset, input.bytes.size(), syntax, header_records, skip_blank,
                                               "'in'", with_digest ? &digest : nullptr, mapped ? memory : nullptr);
      const std::string how = where + (mapped ? " mapped" : " streamed");
      EXPECT_EQ(got.records, expected.records) << how;
      EXPECT_EQ(got.header_bytes, expected.header_bytes) << how;
      EXPECT_EQ(got.add_terminator, expected.add_terminator) << how;
      EXPECT_EQ(got.longest_record_bytes, expected.longest_record_bytes) << how;
      EXPECT_NEAR(got.record_bytes_squared, expected.record_bytes_squared, 1e-12 * expected.record_bytes_squared)
          << how;
      if (with_digest) {
        EXPECT_EQ(digest, expected_digest) << how;
      }
    }
  }

  static constexpr std::uint64_t kOffset = 4099;  // not a multiple of any block
  testing::TempDir dir_;
};

const formats::RecordSyntax kLines{'\n', false, ','};
const formats::RecordSyntax kCsv{'\n', true, ','};

TEST_F(TextCountTest, RandomLinesAndCsvRecordsAreCountedAsTheyWereWritten) {
  for (std::uint64_t trial = 0; trial < 40; ++trial) {
    const bool csv = trial % 2 == 1;
    const Input input = random_text(trial, trial % 7 == 0 ? 0 : 1 + trial * 3, 1 + trial % 9 * 7, csv, trial % 3 == 0);
    for (const std::uint64_t header : {0, 1, 3}) {
      for (const bool skip_blank : {false, true}) {
        for (const bool digest : {false, true}) {
          expect_count(input, csv ? kCsv : kLines, header, skip_blank, digest,
                       "trial " + std::to_string(trial) + " header " + std::to_string(header) +
                           (skip_blank ? " skip-blank" : "") + (digest ? " digest" : ""));
        }
      }
    }
  }
}

// Over the 2 MiB pieces of the streamed pass and the 8 MiB pieces of the
// mapped one, with one record longer than a piece: the bulk count goes on
// across pieces, and the record-by-record count keeps the record in
// progress (growing its buffer for the long one).
TEST_F(TextCountTest, InputsLargerThanAPieceAndARecordLargerThanAPiece) {
  for (const bool csv : {false, true}) {
    Input input = random_text(7, 150000, 120, csv, false);
    input.records.insert(input.records.begin() + 1000, std::string(5 << 20, 'q') + '\n');
    input.records.push_back("end\n");
    input.bytes.clear();
    for (const std::string& record : input.records) input.bytes += record;
    input.bytes.pop_back();  // and the last record unterminated
    for (const bool digest : {false, true}) {
      expect_count(input, csv ? kCsv : kLines, 2, false, digest,
                   std::string(csv ? "csv" : "lines") + (digest ? " digest" : ""));
    }
  }
}

// A count of `bytes` at `offset` of `file` that goes on from each of the
// first, middle and last of the points `told` (by one that counted
// `whole`) must get `whole` to the bit and tell the same points after it.
void expect_counts_on(io::BlockFile& file, std::uint64_t offset, std::uint64_t bytes,
                      const formats::RecordSyntax& syntax, std::uint64_t header, bool skip_blank,
                      const std::vector<TextCountProgress>& told, const TextCount& whole, const std::string& kind) {
  for (const std::size_t k : {std::size_t{0}, told.size() / 2, told.size() - 1}) {
    TextCountResume resume;
    resume.from = &told[k];
    std::vector<TextCountProgress> later;
    resume.progress = [&](const TextCountProgress& p) { later.push_back(p); };
    const TextCount got =
        count_text_records(file, offset, bytes, syntax, header, skip_blank, "'in'", nullptr, nullptr, nullptr, &resume);
    const std::string how = kind + ", on from byte " + std::to_string(told[k].through);
    EXPECT_TRUE(resume.counted_on) << how;
    EXPECT_EQ(got.records, whole.records) << how;
    EXPECT_EQ(got.header_bytes, whole.header_bytes) << how;
    EXPECT_EQ(got.add_terminator, whole.add_terminator) << how;
    EXPECT_EQ(got.longest_record_bytes, whole.longest_record_bytes) << how;
    EXPECT_EQ(got.record_bytes_squared, whole.record_bytes_squared) << how;  // to the bit
    EXPECT_EQ(later.size(), told.size() - 1 - k) << how;                     // the same points after it
  }
}

// --checkpoint's progress (TextCountResume): a streamed bulk count of lines
// tells how far it got every 2 MiB piece here (1/64 of 20 MiB is less than
// a piece), and a count that goes on from any of those points gets the
// count of one pass to the bit (the squares summed in the same order), for
// a header and an unterminated last line. A count of another kind (blank
// records skipped: record by record) does not go on from a bulk count's
// progress: it counts from the start.
TEST_F(TextCountTest, ACountGoesOnFromItsProgressToTheCountOfOnePass) {
  Input input = random_text(41, 110000, 380, false, true);
  const std::string path = (dir_.path() / "input").string();
  testing::write_file(path, std::string(kOffset, '\n') + input.bytes);
  const auto file = io::BlockFile::open_input(path);
  const std::uint64_t bytes = input.bytes.size();
  ASSERT_GT(bytes, std::uint64_t{16} << 20);
  std::vector<TextCountProgress> told;
  TextCountResume telling;
  telling.progress = [&](const TextCountProgress& p) { told.push_back(p); };
  const TextCount whole =
      count_text_records(*file, kOffset, bytes, kLines, 2, false, "'in'", nullptr, nullptr, nullptr, &telling);
  EXPECT_FALSE(telling.counted_on);
  ASSERT_GE(told.size(), 6u);
  for (std::size_t k = 1; k < told.size(); ++k) EXPECT_GT(told[k].through, told[k - 1].through);
  const TextCount expected = expected_count(input, 2, false, false, nullptr);
  EXPECT_EQ(whole.records, expected.records);
  expect_counts_on(*file, kOffset, bytes, kLines, 2, false, told, whole, "lines");
  TextCountResume skipping;
  skipping.from = &told.back();
  const TextCount blank_skipped =
      count_text_records(*file, kOffset, bytes, kLines, 2, true, "'in'", nullptr, nullptr, nullptr, &skipping);
  EXPECT_FALSE(skipping.counted_on);
  EXPECT_EQ(blank_skipped.records, expected_count(input, 2, true, false, nullptr).records);
}

// The same record by record: CSV whose quoted fields hold terminators, and
// lines with blank records skipped, each with a header and an unterminated
// last record. The progress is told where a record starts, every 2 MiB
// piece here, and a count that goes on from any of those points gets the
// count of one pass to the bit; a bulk count does not go on from it.
TEST_F(TextCountTest, ACountRecordByRecordGoesOnFromItsProgressToo) {
  for (const bool csv : {true, false}) {
    const Input input = random_text(csv ? 43 : 44, 90000, 420, csv, true);
    const std::string path = (dir_.path() / "input").string();
    testing::write_file(path, std::string(kOffset, '\n') + input.bytes);
    const auto file = io::BlockFile::open_input(path);
    const std::uint64_t bytes = input.bytes.size();
    ASSERT_GT(bytes, std::uint64_t{12} << 20);
    const formats::RecordSyntax& syntax = csv ? kCsv : kLines;
    const bool skip_blank = !csv;
    const std::string kind = csv ? "csv" : "lines, blank skipped";
    std::vector<TextCountProgress> told;
    TextCountResume telling;
    telling.progress = [&](const TextCountProgress& p) { told.push_back(p); };
    const TextCount whole =
        count_text_records(*file, kOffset, bytes, syntax, 1, skip_blank, "'in'", nullptr, nullptr, nullptr, &telling);
    EXPECT_EQ(whole.records, expected_count(input, 1, skip_blank, false, nullptr).records) << kind;
    ASSERT_GE(told.size(), 3u) << kind;
    for (const TextCountProgress& p : told) EXPECT_TRUE(p.by_records) << kind;
    expect_counts_on(*file, kOffset, bytes, syntax, 1, skip_blank, told, whole, kind);
    if (csv) continue;
    TextCountResume bulk;  // plain lines, blank records kept
    bulk.from = &told.back();
    const TextCount counted =
        count_text_records(*file, kOffset, bytes, kLines, 1, false, "'in'", nullptr, nullptr, nullptr, &bulk);
    EXPECT_FALSE(bulk.counted_on);
    EXPECT_EQ(counted.records, expected_count(input, 1, false, false, nullptr).records);
  }
}

// A file mapped as the driver maps one (io::MappedBytes), larger than the
// pass's read-ahead window (64 MiB asked for ahead of the 8 MiB pieces):
// heavy-tailed CRLF lines (lognormal lengths, one of 3 MiB), a header, the
// last line unterminated, at an offset that is not a page's. The mapped
// count, which asks the kernel to read ahead, must equal the streamed one
// and the records written.
TEST_F(TextCountTest, AHeavyTailedFileMappedAndReadAheadIsCountedAsStreamed) {
  std::mt19937_64 random(36);
  std::lognormal_distribution<double> length(6.0, 1.3);
  Input input;
  while (input.bytes.size() < (std::size_t{80} << 20)) {
    const auto bytes = static_cast<std::size_t>(std::min(length(random), 200000.0));
    std::string record(bytes, static_cast<char>('a' + random() % 26));
    record += "\r\n";
    input.bytes += record;
    input.records.push_back(std::move(record));
  }
  std::string longest(std::size_t{3} << 20, 'L');
  longest.append("\r\n");
  input.records.insert(input.records.begin() + 5000, longest);
  input.bytes.clear();
  for (const std::string& record : input.records) input.bytes += record;
  input.bytes.pop_back();  // the last line without its terminator (its \r stays a byte of it)
  const std::uint64_t header = 1;
  const TextCount expected = expected_count(input, header, false, false, nullptr);
  const std::string path = (dir_.path() / "heavy").string();
  testing::write_file(path, std::string(kOffset, '\n') + input.bytes);
  const auto file = io::BlockFile::open_input(path);
  std::optional<io::MappedBytes> mapped = io::MappedBytes::map(*file, kOffset, input.bytes.size(), "'heavy'");
  ASSERT_TRUE(mapped.has_value());
  for (const bool map : {false, true}) {
    const TextCount got = count_text_records(*file, kOffset, input.bytes.size(), kLines, header, false, "'heavy'",
                                             nullptr, map ? mapped->data() : nullptr);
    EXPECT_EQ(got.records, expected.records) << map;
    EXPECT_EQ(got.header_bytes, expected.header_bytes) << map;
    EXPECT_TRUE(got.add_terminator) << map;
    EXPECT_EQ(got.longest_record_bytes, (std::uint64_t{3} << 20) + 2) << map;
    EXPECT_NEAR(got.record_bytes_squared, expected.record_bytes_squared, 1e-12 * expected.record_bytes_squared) << map;
  }
}

TEST_F(TextCountTest, AnUnterminatedQuotedFieldIsRefusedWithWhereItsRecordStarts) {
  const std::string text = "a,b\n\"c\nd,e\n";
  const auto* memory = reinterpret_cast<const std::byte*>(text.data());
  const std::string path = (dir_.path() / "input").string();
  testing::write_file(path, text);
  const auto file = io::BlockFile::open_input(path);
  for (const std::byte* mapped : {static_cast<const std::byte*>(nullptr), memory}) {
    try {
      count_text_records(*file, 0, text.size(), kCsv, 0, false, "'in'", nullptr, mapped);
      ADD_FAILURE() << "no error";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("input 'in': unterminated quoted field in the record starting at byte 4"),
                std::string::npos)
          << e.what();
    }
    // The same bytes as plain lines are three records.
    EXPECT_EQ(count_text_records(*file, 0, text.size(), kLines, 0, false, "'in'", nullptr, mapped).records, 3u);
  }
}

TEST_F(TextCountTest, TfrecordFramesAreCountedWholeAndABrokenFrameIsRefused) {
  formats::RecordSyntax frames;
  frames.framing = formats::Framing::kTfrecord;
  std::mt19937_64 random(11);
  Input input;
  for (int r = 0; r < 300; ++r) {
    std::string frame;
    formats::append_tfrecord_frame(frame, std::string(random() % 200, static_cast<char>('a' + r % 26)));
    input.bytes += frame;
    input.records.push_back(frame);
  }
  for (const bool digest : {false, true}) expect_count(input, frames, 0, false, digest, "tfrecord");

  const std::string path = (dir_.path() / "broken").string();
  for (const bool truncate : {false, true}) {
    std::string broken = input.bytes;
    if (truncate) {
      broken.pop_back();
    } else {
      broken[input.records[0].size() + 20] ^= 1;  // inside the second frame's data
    }
    testing::write_file(path, broken);
    const auto file = io::BlockFile::open_input(path);
    EXPECT_THROW(count_text_records(*file, 0, broken.size(), frames, 0, false, "'in'"), InputError) << truncate;
  }
}

}  // namespace
}  // namespace extshuffle::dataset::text_count_test
