// Record indexes (dataset/record_index.hpp): written by the counting pass
// itself (input_index.hpp) for every format, mapped and read back by record
// number (indexed_records.hpp). Each input is built from records known in
// advance, and every record read (as the record and raw, as the CLI writes
// it) must be that record; the raw records of a whole input, end to end,
// must be its bytes after the header. Deterministic inputs.
#include "extshuffle/dataset/record_index.hpp"

#include <gtest/gtest.h>

#include <numeric>
#include <string>
#include <vector>

#include "extshuffle/dataset/index_identity.hpp"
#include "extshuffle/dataset/indexed_dataset.hpp"
#include "extshuffle/dataset/mapped_index.hpp"
#include "extshuffle/errors.hpp"
#include "extshuffle/formats/tfrecord.hpp"
#include "support/command.hpp"
#include "support/indexed_files.hpp"
#include "support/tar_archives.hpp"

namespace extshuffle::dataset::record_index_test {
namespace {

using testing::indexed;
using testing::open_beside;
using testing::read_file;
using testing::read_segments;
using testing::TempDir;
using testing::write_file;

// Records [0, N) of `records` as `form` gives them, each a string (tar
// samples in kRecord form: their members' data, joined by '|').
std::vector<std::string> read_all(const IndexedRecords& records, RecordForm form) {
  std::vector<std::uint64_t> all(records.size());
  std::iota(all.begin(), all.end(), 0);
  const ReadPlan plan = records.plan(all, form);
  const std::vector<std::string> segments = read_segments(records, plan);
  std::vector<std::string> out;
  for (std::size_t r = 0; r < all.size(); ++r) {
    std::string record;
    for (std::size_t s = plan.first_segment[r]; s < plan.first_segment[r + 1]; ++s) {
      record += (s > plan.first_segment[r] ? "|" : "") + segments[s];
    }
    out.push_back(record);
  }
  return out;
}

std::string joined(const std::vector<std::string>& parts) {
  return std::accumulate(parts.begin(), parts.end(), std::string());
}

TEST(RecordIndex, LinesWithCrlfEmptyLinesAndAnUnterminatedLastOne) {
  TempDir dir;
  const std::string path = indexed(dir, "a.txt", "one\r\n\ntwo\nthree");
  const auto records = open_beside({path});
  EXPECT_EQ(records->size(), 4u);
  EXPECT_EQ(read_all(*records, RecordForm::kRecord), (std::vector<std::string>{"one\r", "", "two", "three"}));
  EXPECT_EQ(read_all(*records, RecordForm::kRaw), (std::vector<std::string>{"one\r\n", "\n", "two\n", "three\n"}));
  const MappedIndex index(index_path_beside(path));
  EXPECT_TRUE(index.header().add_terminator);
  EXPECT_EQ(std::vector<std::uint64_t>(index.offsets().begin(), index.offsets().end()),
            (std::vector<std::uint64_t>{0, 5, 6, 10, 15}));
}

TEST(RecordIndex, ManyLinesStreamOutInBatches) {
  // More records than the writer holds before writing (64 Ki values), found
  // in the counting pass's bulk batches, streamed pieces of 2 MiB.
  TempDir dir;
  std::string text;
  std::vector<std::uint64_t> expected{0};
  for (int k = 0; k < 300000; ++k) {
    text += std::string(k % 23, 'x') + "\n";
    expected.push_back(text.size());
  }
  const std::string path = indexed(dir, "many.txt", text);
  const MappedIndex index(index_path_beside(path));
  EXPECT_EQ(std::vector<std::uint64_t>(index.offsets().begin(), index.offsets().end()), expected);
}

TEST(RecordIndex, CsvQuotedTerminatorsStayInTheirRecordAndTheHeaderIsNone) {
  TempDir dir;
  const std::string body = "1,\"a\nb\"\n2,\"c\"\"\r\nd\"\n3,e\n";
  const std::string path = indexed(dir, "a.csv", "id,text\n" + body);
  const auto records = open_beside({path});
  EXPECT_EQ(read_all(*records, RecordForm::kRecord),
            (std::vector<std::string>{"1,\"a\nb\"", "2,\"c\"\"\r\nd\"", "3,e"}));
  EXPECT_EQ(joined(read_all(*records, RecordForm::kRaw)), body);
  EXPECT_EQ(records->inputs()[0].header, "id,text\n");
}

TEST(RecordIndex, SkipEmptyKeepsEachRecordsOwnSpan) {
  TempDir dir;
  DatasetOptions options;
  options.skip_empty = true;
  const std::string path = indexed(dir, "a.jsonl", "\n{\"a\":1}\n  \n\t\r\n{\"b\":2}\n \n{\"c\":3}\n   ", options);
  const auto records = open_beside({path}, options);
  EXPECT_EQ(read_all(*records, RecordForm::kRecord), (std::vector<std::string>{"{\"a\":1}", "{\"b\":2}", "{\"c\":3}"}));
  EXPECT_EQ(read_all(*records, RecordForm::kRaw),
            (std::vector<std::string>{"{\"a\":1}\n", "{\"b\":2}\n", "{\"c\":3}\n"}));
  EXPECT_FALSE(MappedIndex(index_path_beside(path)).header().add_terminator);  // the blank tail lacks it
  EXPECT_THROW(open_beside({path}), InputError);  // read without --skip-empty: another reading
}

TEST(RecordIndex, TfrecordFramesGiveTheirDataAndRawFrames) {
  TempDir dir;
  std::string file;
  const std::vector<std::string> data{"", "x", std::string(70000, 'y') + "\n\0z"};
  for (const std::string& d : data) formats::append_tfrecord_frame(file, d);
  const std::string path = indexed(dir, "a.tfrecord", file);
  const auto records = open_beside({path});
  EXPECT_EQ(read_all(*records, RecordForm::kRecord), data);
  EXPECT_EQ(joined(read_all(*records, RecordForm::kRaw)), file);
}

TEST(RecordIndex, TarSamplesGiveTheirMembersAndRawSamples) {
  using testing::member;
  using testing::pax_member;
  using testing::pax_record;
  TempDir dir;
  const std::string long_name = std::string(150, 'd') + "/sample.json";
  const std::string a = member("a.jpg", "JPEG") + member("a.cls", "7");
  // A directory between two members of one sample: skipped, the sample two ranges.
  const std::string b = member("b.txt", "hello") + member("subdir/", "", '5') + member("b.json", "{}");
  const std::string c = pax_member(pax_record("path", long_name)) + member("stand-in", "{\"k\":1}");
  const std::string path = indexed(dir, "a.tar", a + b + c + testing::kTrailer);
  const auto records = open_beside({path});
  EXPECT_EQ(read_all(*records, RecordForm::kRecord), (std::vector<std::string>{"JPEG|7", "hello|{}", "{\"k\":1}"}));
  EXPECT_EQ(read_all(*records, RecordForm::kRaw),
            (std::vector<std::string>{a, member("b.txt", "hello") + member("b.json", "{}"), c}));
  const ReadPlan plan = records->plan(std::vector<std::uint64_t>{2, 0}, RecordForm::kRecord);
  EXPECT_EQ(std::vector<std::string_view>(plan.segment_names.begin(), plan.segment_names.end()),
            (std::vector<std::string_view>{long_name, "a.jpg", "a.cls"}));
}

TEST(RecordIndex, NpyAndFixedRecordsNeedNoArrays) {
  TempDir dir;
  std::string dict = "{'descr': '<u2', 'fortran_order': False, 'shape': (3, 2), }";
  dict.resize(117, ' ');  // the header padded to 128 bytes, as numpy pads it
  const std::string npy = std::string("\x93NUMPY\x01\x00", 8) + static_cast<char>(dict.size() + 1) + '\0' + dict + '\n';
  const std::string rows = "aabbccddeeff";
  const std::string path = indexed(dir, "a.npy", npy + rows);
  EXPECT_TRUE(MappedIndex(index_path_beside(path)).header().arrays.empty());
  const auto records = open_beside({path});
  EXPECT_EQ(read_all(*records, RecordForm::kRecord), (std::vector<std::string>{"aabb", "ccdd", "eeff"}));
  DatasetOptions fixed;
  fixed.record_size = 3;
  const std::string bin = (dir / "a.bin").string();
  write_file(bin, "abcdefghi");
  EXPECT_FALSE(needs_index(fixed, bin));
  EXPECT_EQ(read_all(*open_indexed_dataset({bin}, {""}, fixed, true), RecordForm::kRecord),
            (std::vector<std::string>{"abc", "def", "ghi"}));
}

TEST(RecordIndex, SeveralFilesAreOneDatasetInOrder) {
  TempDir dir;
  const std::string a = indexed(dir, "a.csv", "h\n1\n2");
  const std::string b = indexed(dir, "b.csv", "h\n3\n");
  const std::string empty = indexed(dir, "c.csv", "h\n");
  const auto records = open_beside({a, empty, b});
  EXPECT_EQ(read_all(*records, RecordForm::kRaw), (std::vector<std::string>{"1\n", "2\n", "3\n"}));
  EXPECT_THROW(records->plan(std::vector<std::uint64_t>{3}, RecordForm::kRecord), std::out_of_range);
  // Inputs the CLI would refuse as one dataset are refused here too.
  const std::string other = indexed(dir, "d.csv", "g\n4\n");
  EXPECT_THROW(open_beside({a, other}), InputError);
}

TEST(RecordIndex, AnIndexReadsBackWithNumpysLayout) {
  // What docs/cli.md "Record indexes" tells a reader without the package:
  // the footer's offset, the JSON header, arrays at their offsets.
  TempDir dir;
  const std::string path = indexed(dir, "a.txt", "a\nbb\nccc\n");
  const std::string index = read_file(index_path_beside(path));
  ASSERT_EQ(index.substr(0, kIndexPreamble.size()), kIndexPreamble);
  ASSERT_EQ(index.substr(index.size() - 8), "XSINDEX1");
  std::uint64_t header_at = 0;
  std::memcpy(&header_at, index.data() + index.size() - 16, 8);
  const IndexHeader header = parse_index_header(index.substr(header_at, index.size() - 16 - header_at), "x");
  EXPECT_EQ(header.records, 3u);
  const IndexArray& offsets = header.arrays.at("offsets");
  std::vector<std::uint64_t> values(offsets.shape[0]);
  std::memcpy(values.data(), index.data() + offsets.offset, offsets.bytes);
  EXPECT_EQ(values, (std::vector<std::uint64_t>{0, 2, 5, 9}));
}

}  // namespace
}  // namespace extshuffle::dataset::record_index_test
