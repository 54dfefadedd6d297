// The output cut into files (src/dataset/sharded_output.hpp) on its own, not
// through the CLI: pieces get the records the arithmetic of output_parts.hpp
// gives them, whatever the size of the writes that bring them; each piece is
// a complete file (the header on top, a .npy header with its own row count);
// nothing is in place before the commit (dataset/output_commit.hpp, the
// production steps), and an abandoned output leaves no file behind. Deterministic: no test here depends on chance.
#include "dataset/sharded_output.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "extshuffle/errors.hpp"
#include "support/command.hpp"
#include "support/commit_steps.hpp"
#include "support/npy_files.hpp"
#include "extshuffle/formats/format_detection.hpp"

namespace extshuffle::dataset::sharded_output_test {
namespace {

namespace fs = std::filesystem;

class ShardedOutputTest : public ::testing::Test {
 protected:

  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::vector<std::string> names() const {
    std::vector<std::string> found;
    for (const auto& entry : fs::directory_iterator(dir_.path())) found.push_back(entry.path().filename().string());
    std::sort(found.begin(), found.end());
    return found;
  }
  static std::string read(const std::string& file) {
    std::ifstream in(file, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  // Hands `bytes` to `out` in pieces of `step` bytes, then finishes. The
  // walk hands on whole records only: `step` is a multiple of the records'
  // size (for text here: of records of one length).
  static void write_in_steps(ShardedOutput& out, const std::string& bytes, std::size_t step) {
    for (std::size_t at = 0; at < bytes.size(); at += step) {
      out.write(reinterpret_cast<const std::byte*>(bytes.data() + at), std::min(step, bytes.size() - at));
    }
    out.finish();
  }

  testing::TempDir dir_;
};

// Each form set field by field: GCC 12 warns of every member a designated
// initialiser leaves out (-Wmissing-field-initializers).
OutputRecordForm fixed(std::size_t record_size) {
  OutputRecordForm form;
  form.record_size = record_size;
  return form;
}

OutputRecordForm lines(const std::string& header = "") {
  OutputRecordForm form;
  form.syntax = formats::framed_syntax(formats::Format::kLines, false);
  form.header = header;
  return form;
}

TEST_F(ShardedOutputTest, FixedRecordsIntoNearEqualShardsWhateverTheWriteSizes) {
  std::string records;
  for (int r = 0; r < 10; ++r) records += std::string(4, static_cast<char>('a' + r));
  for (const std::size_t step : {std::size_t{4}, std::size_t{12}, std::size_t{40}}) {
    OutputSpec spec;
    spec.pattern = path("part-{shard}-of-{shards}.bin");
    spec.options.shard_count = 3;
    ShardedOutput out(spec);
    EXPECT_EQ(out.start(fixed(4), 10), 10u);
    write_in_steps(out, records, step);
    testing::commit_outputs({&out});
    // 10 records in 3 shards: the first 10 mod 3 shards get one more.
    EXPECT_SAME_BYTES(read(path("part-00000-of-00003.bin")), records.substr(0, 16)) << step;
    EXPECT_SAME_BYTES(read(path("part-00001-of-00003.bin")), records.substr(16, 12)) << step;
    EXPECT_SAME_BYTES(read(path("part-00002-of-00003.bin")), records.substr(28, 12)) << step;
    ASSERT_EQ(out.files().size(), 3u);
    EXPECT_EQ(out.files()[0].records, 4u);
    EXPECT_EQ(out.files()[1].shard, 1u);
    EXPECT_EQ(out.files()[2].shards, 3u);
    EXPECT_EQ(out.files()[2].bytes, 12u);
    EXPECT_EQ(out.files()[2].xxh64.size(), 16u);
    EXPECT_NE(out.files()[0].xxh64, out.files()[1].xxh64);
  }
}

TEST_F(ShardedOutputTest, SplitsAndShardsOfTextEachCarryTheHeader) {
  std::string records;
  for (int r = 0; r < 10; ++r) records += "row" + std::to_string(r) + "\n";
  OutputSpec spec;
  spec.pattern = path("{split}-{shard}.csv");
  spec.options.splits = parse_split_spec("train=0.6,val=0.4");
  spec.options.shard_count = 2;
  ShardedOutput out(spec);
  EXPECT_EQ(out.start(lines("id\n"), 10), 10u);
  // Pieces of one, two and three records: the cutter finds their ends.
  std::size_t begin = 0;
  for (const int count : {1, 2, 3, 1, 2, 1}) {
    std::size_t end = begin;
    for (int k = 0; k < count; ++k) end = records.find('\n', end) + 1;
    out.write(reinterpret_cast<const std::byte*>(records.data() + begin), end - begin);
    begin = end;
  }
  out.finish();
  testing::commit_outputs({&out});
  EXPECT_EQ(read(path("train-00000.csv")), "id\nrow0\nrow1\nrow2\n");
  EXPECT_EQ(read(path("train-00001.csv")), "id\nrow3\nrow4\nrow5\n");
  EXPECT_EQ(read(path("val-00000.csv")), "id\nrow6\nrow7\n");
  EXPECT_EQ(read(path("val-00001.csv")), "id\nrow8\nrow9\n");
  ASSERT_EQ(out.files().size(), 4u);
  EXPECT_EQ(out.files()[2].split, "val");
  EXPECT_EQ(out.files()[2].path, path("val-00000.csv"));
}

TEST_F(ShardedOutputTest, SplitsThatLeaveRecordsOutTakeOnlyTheirs) {
  OutputSpec spec;
  spec.pattern = path("{split}.txt");
  spec.options.splits = parse_split_spec("a=3,b=2");
  ShardedOutput out(spec);
  // The walk need not produce the records past the last split.
  EXPECT_EQ(out.start(lines(), 10), 5u);
  write_in_steps(out, "0\n1\n2\n3\n4\n", 4);
  testing::commit_outputs({&out});
  EXPECT_EQ(read(path("a.txt")), "0\n1\n2\n");
  EXPECT_EQ(read(path("b.txt")), "3\n4\n");
  OutputSpec too_many = spec;
  too_many.pattern = path("{split}-again.txt");
  ShardedOutput refused(too_many);
  EXPECT_THROW(refused.start(lines(), 4), UsageError);
}

TEST_F(ShardedOutputTest, EachNpyPieceHeaderGivesItsOwnRows) {
  // The header of a .npy of 5 rows of one little-endian u4, as numpy.save writes it.
  const std::string header =
      testing::npy_file(1, "{'descr': '<u4', 'fortran_order': False, 'shape': (5,), }", "");
  OutputSpec spec;
  spec.pattern = path("x-{shard}.npy");
  spec.options.shard_count = 2;
  ShardedOutput out(spec);
  OutputRecordForm form = fixed(4);
  form.header = header;
  form.npy = true;
  out.start(form, 5);
  write_in_steps(out, std::string(20, '\x01'), 4);
  testing::commit_outputs({&out});
  const std::string first = read(path("x-00000.npy")), second = read(path("x-00001.npy"));
  EXPECT_NE(first.find("'shape': (3,)"), std::string::npos) << first.substr(0, 64);
  EXPECT_NE(second.find("'shape': (2,)"), std::string::npos) << second.substr(0, 64);
  EXPECT_EQ(first.size() % 64, 12u);  // a header of a multiple of 64 bytes, then 3 rows of 4 bytes
  EXPECT_EQ(second.size() % 64, 8u);
}

TEST_F(ShardedOutputTest, NothingIsInPlaceBeforeCommitAndAnAbandonedOutputLeavesNothing) {
  {
    OutputSpec spec;
    spec.pattern = path("s-{shard}.txt");
    spec.options.shard_count = 2;
    ShardedOutput out(spec);
    out.start(lines(), 4);
    write_in_steps(out, "a\nb\nc\nd\n", 2);
    // Finished, not committed: no destination holds anything yet.
    for (const std::string& name : names()) EXPECT_EQ(name.find("s-0000"), std::string::npos) << name;
  }
  // Destroyed uncommitted: no file and no temporary left.
  EXPECT_TRUE(names().empty()) << names().front();
}

TEST_F(ShardedOutputTest, PatternsThatCannotNameEveryPieceAreRefused) {
  OutputSpec spec;
  spec.pattern = path("one-name.txt");
  spec.options.shard_count = 2;
  EXPECT_THROW(ShardedOutput{spec}, UsageError);
  spec.pattern = "-";
  EXPECT_THROW(ShardedOutput{spec}, UsageError);
  spec.pattern = path("{shard}.txt");
  spec.options.shard_count = 0;
  spec.options.splits = parse_split_spec("a=0.5,b=0.5");
  EXPECT_THROW(ShardedOutput{spec}, UsageError);  // two splits, one name
}

}  // namespace
}  // namespace extshuffle::dataset::sharded_output_test
