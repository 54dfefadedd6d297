// The arithmetic of src/mpi/outputs that needs no mpirun: the pieces an
// output is cut into (piece_plan.hpp) against the counts extshuffle's own
// cut gives, the piece a record falls in, a rank's range of the output
// records with -n (rank_range.hpp) and the bytes it hands on, and
// --dry-run's line per rank (dry_run_shares.hpp). The collective parts
// (offsets by exclusive sum, the pieces placed, the commit) are run by
// mpirun in mpi_pieces_test and mpi_commit_test. Deterministic:
// false-failure rate 0.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "extshuffle/dataset/output_parts.hpp"
#include "extshuffle/errors.hpp"
#include "extshuffle/job.hpp"
#include "mpi/distribution.hpp"
#include "mpi/inputs/distributed_input.hpp"
#include "mpi/outputs/dry_run_shares.hpp"
#include "mpi/outputs/piece_plan.hpp"
#include "mpi/outputs/rank_range.hpp"

namespace extshuffle::mpi::mpi_outputs_test {
namespace {

std::vector<std::uint64_t> piece_records(const PiecePlan& plan) {
  std::vector<std::uint64_t> records;
  for (const Piece& piece : plan.pieces) records.push_back(piece.records);
  return records;
}

// Each piece starts where the one before it ends, and together they take
// plan.records; piece_of(r) is the one piece of records that holds r.
void expect_contiguous(const PiecePlan& plan) {
  std::uint64_t next = 0;
  for (const Piece& piece : plan.pieces) {
    EXPECT_EQ(piece.first_record, next) << piece.path;
    next += piece.records;
  }
  EXPECT_EQ(next, plan.records);
  for (std::uint64_t r = 0; r < plan.records; ++r) {
    const Piece& piece = plan.pieces[plan.piece_of(r)];
    EXPECT_GT(piece.records, 0u) << r;
    EXPECT_LE(piece.first_record, r);
    EXPECT_LT(r, piece.first_record + piece.records);
  }
}

TEST(MpiPiecePlan, OneOutputIsOnePieceOfEveryRecord) {
  const PiecePlan plan = plan_pieces(JobOptions{}, "out.bin", 8, 100);
  ASSERT_EQ(plan.pieces.size(), 1u);
  EXPECT_EQ(plan.pieces[0].path, "out.bin");
  EXPECT_EQ(plan.pieces[0].first_record, 0u);
  EXPECT_EQ(plan.pieces[0].records, 100u);
  EXPECT_EQ(plan.records, 100u);
  EXPECT_EQ(plan.left_out, 0u);
  EXPECT_FALSE(plan.several_files);
  EXPECT_FALSE(plan.cut_by_bytes);
}

TEST(MpiPiecePlan, ShardsAreNearEqualWithTheFirstOnesLonger) {
  JobOptions options;
  options.output.shard_count = 3;
  const PiecePlan plan = plan_pieces(options, "out-{shard}-of-{shards}.bin", 8, 10);
  EXPECT_TRUE(plan.several_files);
  EXPECT_EQ(piece_records(plan), (std::vector<std::uint64_t>{4, 3, 3}));
  ASSERT_EQ(plan.pieces.size(), 3u);
  EXPECT_EQ(plan.pieces[0].path, "out-00000-of-00003.bin");
  EXPECT_EQ(plan.pieces[2].path, "out-00002-of-00003.bin");
  EXPECT_EQ(plan.pieces[2].shard, 2u);
  EXPECT_EQ(plan.pieces[2].shards, 3u);
  expect_contiguous(plan);
}

TEST(MpiPiecePlan, ShardsBeyondTheRecordsAreEmptyAndPassedOver) {
  JobOptions options;
  options.output.shard_count = 5;
  const PiecePlan plan = plan_pieces(options, "out-{shard}.bin", 8, 3);
  EXPECT_EQ(piece_records(plan), (std::vector<std::uint64_t>{1, 1, 1, 0, 0}));
  EXPECT_EQ(plan.piece_of(2), 2u);
  expect_contiguous(plan);
}

TEST(MpiPiecePlan, FixedSizeShardSizeIsACountOfWholeRecords) {
  JobOptions options;
  options.output.shard_bytes = 35;  // 3 records of 10 bytes
  const PiecePlan plan = plan_pieces(options, "out-{shard}-of-{shards}.bin", 10, 10);
  EXPECT_FALSE(plan.cut_by_bytes);
  EXPECT_EQ(piece_records(plan), (std::vector<std::uint64_t>{3, 3, 3, 1}));
  EXPECT_EQ(plan.pieces.back().path, "out-00003-of-00004.bin");
  expect_contiguous(plan);
  // A shard smaller than a record still holds one.
  options.output.shard_bytes = 5;
  EXPECT_EQ(piece_records(plan_pieces(options, "out-{shard}.bin", 10, 4)), (std::vector<std::uint64_t>{1, 1, 1, 1}));
}

TEST(MpiPiecePlan, TextShardSizeLeavesThePiecesToTheByteCut) {
  JobOptions options;
  options.output.shard_bytes = 100;
  const PiecePlan plan = plan_pieces(options, "out-{shard}.jsonl", 0, 10);
  EXPECT_TRUE(plan.cut_by_bytes);
  EXPECT_TRUE(plan.pieces.empty());
  EXPECT_EQ(plan.records, 10u);
  EXPECT_EQ(plan.split_ends, (std::vector<std::uint64_t>{10}));
}

TEST(MpiPiecePlan, SplitsEndWhereExtshuffleEndsThemAndLeaveTheRestOut) {
  JobOptions options;
  options.output.splits = dataset::parse_split_spec("train=0.5,test=3");
  const PiecePlan plan = plan_pieces(options, "out-{split}.bin", 8, 10);
  EXPECT_EQ(plan.split_ends, dataset::split_ends(options.output.splits, 10));
  EXPECT_EQ(plan.split_ends, (std::vector<std::uint64_t>{5, 8}));
  EXPECT_EQ(plan.records, 8u);
  EXPECT_EQ(plan.left_out, 2u);
  ASSERT_EQ(plan.pieces.size(), 2u);
  EXPECT_EQ(plan.pieces[0].path, "out-train.bin");
  EXPECT_EQ(plan.pieces[0].split, "train");
  EXPECT_EQ(plan.pieces[1].path, "out-test.bin");
  EXPECT_EQ(plan.pieces[1].first_record, 5u);
  EXPECT_EQ(plan.pieces[1].records, 3u);
  expect_contiguous(plan);
}

TEST(MpiPiecePlan, EachSplitIsShardedOnItsOwn) {
  JobOptions options;
  options.output.splits = dataset::parse_split_spec("train=0.7,test=rest");
  options.output.shard_count = 2;
  const PiecePlan plan = plan_pieces(options, "{split}-{shard}.bin", 8, 10);
  // train: 7 records in shards of 4 and 3; test: 3 in shards of 2 and 1.
  EXPECT_EQ(piece_records(plan), (std::vector<std::uint64_t>{4, 3, 2, 1}));
  EXPECT_EQ(plan.pieces[1].path, "train-00001.bin");
  EXPECT_EQ(plan.pieces[2].path, "test-00000.bin");
  EXPECT_EQ(plan.pieces[2].first_record, 7u);
  EXPECT_EQ(plan.left_out, 0u);
  expect_contiguous(plan);
}

TEST(MpiPiecePlan, APatternWithoutTheShardIsAUsageError) {
  JobOptions options;
  options.output.shard_count = 3;
  EXPECT_THROW(plan_pieces(options, "out.bin", 8, 10), UsageError);
  options.output.shard_count = 0;
  options.output.splits = dataset::parse_split_spec("a=5,b=6");
  EXPECT_THROW(plan_pieces(options, "out-{split}.bin", 8, 10), UsageError);  // 11 of 10 records
}

// A root of `records` records in `buckets` buckets, rank r owning buckets
// [bucket_begin[r], bucket_begin[r + 1]).
Distribution distribution(std::uint64_t records, std::uint64_t buckets, std::vector<std::uint64_t> bucket_begin) {
  Distribution d;
  d.root.records = records;
  d.buckets = buckets;
  d.ranks = static_cast<int>(bucket_begin.size()) - 1;
  d.bucket_begin = std::move(bucket_begin);
  return d;
}

// The bytes a RankRange hands on of each of `writes`, in turn.
std::vector<std::uint64_t> handed_on(RankRange& range, const std::vector<std::string>& writes) {
  std::vector<std::uint64_t> taken;
  for (const std::string& w : writes) {
    range.write(reinterpret_cast<const std::byte*>(w.data()), w.size(),
                [&](const std::byte* data, std::uint64_t bytes) {
                  EXPECT_EQ(data, reinterpret_cast<const std::byte*>(w.data()));
                  taken.push_back(bytes);
                });
  }
  return taken;
}

TEST(MpiRankRange, ARankTakesTheRecordsOfItsBuckets) {
  // 10 records in 4 buckets of 3, 3, 2, 2; rank 0 owns buckets 0-1, rank 1 2-3.
  const Distribution d = distribution(10, 4, {0, 2, 4});
  RankRange first(d, 0, 4, {}, UINT64_MAX, 0);
  RankRange second(d, 1, 4, {}, UINT64_MAX, 0);
  EXPECT_EQ(first.first_record(), 0u);
  EXPECT_EQ(first.end_record(), 6u);
  EXPECT_EQ(second.first_record(), 6u);
  EXPECT_EQ(second.end_record(), 10u);
  // Without -n every byte is handed on.
  EXPECT_EQ(handed_on(second, {std::string(16, 'x')}), (std::vector<std::uint64_t>{16}));
}

TEST(MpiRankRange, HeadCountCutsFixedSizeRecordsAcrossWrites) {
  const Distribution d = distribution(10, 4, {0, 2, 4});
  // -n 8: rank 1 keeps records 6 and 7 of its 4.
  RankRange second(d, 1, 4, {}, 8, 0);
  EXPECT_EQ(second.first_record(), 6u);
  EXPECT_EQ(second.end_record(), 8u);
  EXPECT_EQ(handed_on(second, {std::string(4, 'a'), std::string(8, 'b'), std::string(4, 'c')}),
            (std::vector<std::uint64_t>{4, 4, 0}));
  // -n 5: rank 1 keeps none, its range empty at the cut.
  RankRange none(d, 1, 4, {}, 5, 0);
  EXPECT_EQ(none.first_record(), 5u);
  EXPECT_EQ(none.end_record(), 5u);
  EXPECT_EQ(handed_on(none, {std::string(16, 'x')}), (std::vector<std::uint64_t>{0}));
}

TEST(MpiRankRange, HeadCountCutsTextAfterWholeRecords) {
  const Distribution d = distribution(10, 4, {0, 2, 4});
  RankRange second(d, 1, 0, {}, 8, 0);  // lines; rank 1 keeps 2 records
  EXPECT_EQ(handed_on(second, {"a\nbb\n", "ccc\ndddd\n"}), (std::vector<std::uint64_t>{5, 0}));
  RankRange split(d, 1, 0, {}, 8, 0);  // the second record in the second write
  EXPECT_EQ(handed_on(split, {"a\n", "bb\nccc\n"}), (std::vector<std::uint64_t>{2, 3}));
  // CSV: a terminator inside quotes does not end the record.
  formats::RecordSyntax csv;
  csv.quoted = true;
  RankRange quoted(d, 1, 0, csv, 7, 0);  // keeps 1 record
  EXPECT_EQ(handed_on(quoted, {"\"a\nb\"\nc\n"}), (std::vector<std::uint64_t>{6}));
}

TEST(MpiDryRunShares, OneLinePerRankOfItsHeldRecordsAndBytes) {
  DistributedInput::State fixed;
  fixed.record_size = 8;
  fixed.held_begin = {0, 3, 3, 10};
  EXPECT_EQ(describe_shares(fixed, 3),
            "rank 0: 3 records, 24 bytes\nrank 1: 0 records, 0 bytes\nrank 2: 7 records, 56 bytes\n");
  DistributedInput::State text;
  text.framed = true;
  text.held_begin = {0, 4, 9};
  text.held_byte_begin = {0, 100, 130};
  EXPECT_EQ(describe_shares(text, 2), "rank 0: 4 records, 100 bytes\nrank 1: 5 records, 30 bytes\n");
  EXPECT_EQ(
      describe_shares(text, 2, {4096, 0}),
      "rank 0: 4 records, 100 bytes, scratch up to 4096 bytes\nrank 1: 5 records, 30 bytes, scratch up to 0 bytes\n");
}

}  // namespace
}  // namespace extshuffle::mpi::mpi_outputs_test
