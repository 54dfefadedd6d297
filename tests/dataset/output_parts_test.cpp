// The arithmetic of splits and shards (dataset/output_parts.hpp) and the
// cutting of output bytes at record boundaries (include/extshuffle/dataset/record_cutter.hpp).
// Deterministic: no test here depends on chance.
#include "extshuffle/dataset/output_parts.hpp"

#include <gtest/gtest.h>

#include <string>

#include "extshuffle/dataset/record_cutter.hpp"
#include "extshuffle/errors.hpp"

namespace extshuffle::dataset::output_parts_test {
namespace {

TEST(OutputParts, SplitEndsAreExactCumulativeFloors) {
  const auto splits = parse_split_spec("train=0.98,val=0.01,test=0.01");
  EXPECT_EQ(split_ends(splits, 1001), (std::vector<std::uint64_t>{980, 990, 1001}));
  EXPECT_EQ(split_ends(splits, 100), (std::vector<std::uint64_t>{98, 99, 100}));
  // Exact at the top of the range, where a double would round.
  EXPECT_EQ(split_ends(splits, UINT64_MAX).back(), UINT64_MAX);
  EXPECT_EQ(split_ends(parse_split_spec("a=0.5"), UINT64_MAX), (std::vector<std::uint64_t>{UINT64_MAX / 2}));
  // Counts and fractions mix; a split depends on the ones before it only.
  EXPECT_EQ(split_ends(parse_split_spec("val=7,test=5,train=0.5"), 1001), (std::vector<std::uint64_t>{7, 12, 512}));
  EXPECT_EQ(split_ends(parse_split_spec("a=.25,b=1"), 10), (std::vector<std::uint64_t>{2, 3}));
  EXPECT_EQ(split_ends(parse_split_spec("all=1.0"), 10), (std::vector<std::uint64_t>{10}));
  EXPECT_THROW(split_ends(parse_split_spec("a=0.5,b=6"), 10), UsageError);
}

TEST(OutputParts, BadSplitSpecsAreUsageErrors) {
  for (const char* bad : {"", "train", "=0.5", "a=0.5,a=0.5", "a=1.5", "a=0.6,b=0.5", "a=-1", "a=0.1.2", "a=x",
                          "a/b=0.5", "a=0.1234567890123456789", "a=99999999999999999999"}) {
    EXPECT_THROW(parse_split_spec(bad), UsageError) << bad;
  }
  const auto parts = parse_split_spec("train=0.98,val=250");
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_TRUE(parts[0].is_fraction);
  EXPECT_EQ(parts[0].numerator, 98u);
  EXPECT_EQ(parts[0].decimals, 2u);
  EXPECT_FALSE(parts[1].is_fraction);
  EXPECT_EQ(parts[1].count, 250u);
}

TEST(OutputParts, ShardsAreNearEqualAndNamesZeroPadded) {
  std::uint64_t total = 0;
  for (std::uint64_t k = 0; k < 7; ++k) total += shard_records(100, 7, k);
  EXPECT_EQ(total, 100u);
  EXPECT_EQ(shard_records(100, 7, 0), 15u);
  EXPECT_EQ(shard_records(100, 7, 1), 15u);
  EXPECT_EQ(shard_records(100, 7, 2), 14u);
  EXPECT_EQ(shard_records(2, 4, 3), 0u);
  EXPECT_EQ(output_file_name("{split}/p-{shard}-of-{shards}.jsonl", "train", 3, 64), "train/p-00003-of-00064.jsonl");
  EXPECT_EQ(output_file_name("p{shard}", "", 7, 1234567), "p0000007");
}

std::string csv_text() {
  return "1,\"a\nb\"\n2,plain\n3,\"x\"\"y\n\nz\"\n4,\n";  // records of 8, 8, 12 and 3 bytes
}

TEST(RecordCutter, CsvRecordsAreNeverCutInsideQuotes) {
  formats::RecordSyntax csv;
  csv.quoted = true;
  const RecordCutter cutter(0, csv);
  const std::string text = csv_text();
  const auto* data = reinterpret_cast<const std::byte*>(text.data());
  EXPECT_EQ(cutter.take_records(data, text.size(), 1).bytes, 8u);
  EXPECT_EQ(cutter.take_records(data, text.size(), 3).bytes, 28u);
  const auto all = cutter.take_records(data, text.size(), 99);
  EXPECT_EQ(all.bytes, text.size());
  EXPECT_EQ(all.records, 4u);
  EXPECT_EQ(cutter.take_bytes(data, text.size(), 20, false).records, 2u);  // 16 bytes fit, 28 do not
  EXPECT_EQ(cutter.take_bytes(data, text.size(), 5, false).records, 0u);
  EXPECT_EQ(cutter.take_bytes(data, text.size(), 5, true).bytes, 8u);  // one record at least
}

// The bulk path for plain terminators agrees with the record-by-record one.
TEST(RecordCutter, BulkCountsAgreeWithScanningEveryRecord) {
  std::string text;
  for (int i = 0; i < 5000; ++i) text += std::string(static_cast<std::size_t>(i % 37), 'x') + "\n";
  const auto* data = reinterpret_cast<const std::byte*>(text.data());
  formats::RecordSyntax lines, quoted;
  quoted.quoted = true;  // no quotes in the text: the same records, found one by one
  const RecordCutter bulk(0, lines), scan(0, quoted);
  for (std::uint64_t records : {0, 1, 1023, 1024, 1025, 4999, 5000, 6000}) {
    const auto a = bulk.take_records(data, text.size(), records), b = scan.take_records(data, text.size(), records);
    EXPECT_EQ(a.bytes, b.bytes) << records;
    EXPECT_EQ(a.records, b.records) << records;
  }
  for (std::uint64_t max : {0, 17, 4096, 100000}) {
    const auto a = bulk.take_bytes(data, text.size(), max, true), b = scan.take_bytes(data, text.size(), max, true);
    EXPECT_EQ(a.bytes, b.bytes) << max;
    EXPECT_LE(a.bytes, std::max<std::uint64_t>(max, 1));
  }
}

TEST(RecordCutter, FixedRecordsByArithmetic) {
  const RecordCutter cutter(8, formats::RecordSyntax{});
  const std::string text(80, 'r');
  const auto* data = reinterpret_cast<const std::byte*>(text.data());
  EXPECT_EQ(cutter.take_records(data, 80, 3).bytes, 24u);
  EXPECT_EQ(cutter.take_records(data, 80, 30).records, 10u);
  EXPECT_EQ(cutter.take_bytes(data, 80, 20, false).records, 2u);
  EXPECT_EQ(cutter.take_bytes(data, 80, 4, true).records, 1u);
}

}  // namespace
}  // namespace extshuffle::dataset::output_parts_test
