// The dataset conveniences around shards and splits (docs/cli.md "Splits",
// "Shards", "The permutation"): a split sized `rest`, the warning for
// records no split takes, pieces an older run left under the same pattern
// (named in a warning and the manifest, removed by --clean only when the
// pattern gives their names exactly), and the recipe that prints the order
// a run applies to N records.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "extshuffle/dataset/output_parts.hpp"
#include "extshuffle/errors.hpp"
#include "extshuffle/dataset/stale_pieces.hpp"
#include "support/command.hpp"

namespace extshuffle::testing::dataset_conveniences_cli_test {
namespace {

using dataset::parse_split_spec;
using dataset::split_ends;

const std::string kBinary = extshuffle_binary();

std::string numbered_lines(int n) {
  std::string lines;
  for (int i = 0; i < n; ++i) lines += "line " + std::to_string(i) + "\n";
  return lines;
}

std::size_t count_lines(const std::string& text) { return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')); }

TEST(SplitRest, TakesWhatTheOthersLeaveAndMovesTheSplitsAfterIt) {
  EXPECT_EQ(split_ends(parse_split_spec("val=100,test=100,train=rest"), 1000),
            (std::vector<std::uint64_t>{100, 200, 1000}));
  EXPECT_EQ(split_ends(parse_split_spec("train=rest,val=0.1"), 1001), (std::vector<std::uint64_t>{901, 1001}));
  EXPECT_EQ(split_ends(parse_split_spec("a=0.5,b=rest,c=10"), 100), (std::vector<std::uint64_t>{50, 90, 100}));
  EXPECT_EQ(split_ends(parse_split_spec("all=rest"), 7), (std::vector<std::uint64_t>{7}));
  EXPECT_EQ(split_ends(parse_split_spec("a=10,b=rest"), 10), (std::vector<std::uint64_t>{10, 10}));
  EXPECT_THROW(split_ends(parse_split_spec("a=11,b=rest"), 10), UsageError);
  EXPECT_THROW(parse_split_spec("a=rest,b=rest"), UsageError);
  EXPECT_THROW(parse_split_spec("a=Rest"), UsageError);
  // A split named rest is still a name.
  EXPECT_EQ(split_ends(parse_split_spec("train=0.98,rest=0.02"), 1000), (std::vector<std::uint64_t>{980, 1000}));
}

TEST(SplitRestCli, WritesEveryRecordAndWarnsOfRecordsLeftOut) {
  TempDir dir;
  write_file(dir / "in.txt", numbered_lines(1000));
  const std::string in_dir = "cd " + dir.path().string() + " && " + kBinary + " --seed 3 in.txt ";
  auto r = run_command(in_dir + "--split val=100,test=100,train=rest -o '{split}.txt'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  ASSERT_EQ(run_command(in_dir + "-o whole.txt").exit_code, 0);
  EXPECT_EQ(count_lines(read_file(dir / "val.txt")), 100u);
  EXPECT_EQ(count_lines(read_file(dir / "test.txt")), 100u);
  EXPECT_SAME_BYTES(read_file(dir / "val.txt") + read_file(dir / "test.txt") + read_file(dir / "train.txt"),
                    read_file(dir / "whole.txt"));
  r = run_command(in_dir + "--split val=100,test=100,train=rest,x=rest -o '{split}.txt'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "extshuffle: invalid --split 'val=100,test=100,train=rest,x=rest': 'rest' may size one split only\n");
  // Without rest: the records left over are said, once, and not written.
  r = run_command(in_dir + "--split val=0.1,test=0.1 -o 'x-{split}.txt'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "extshuffle: warning: --split: 800 of the 1000 records are in no split and are not written (a "
                   "split of size 'rest' takes them)\n");
  const std::string whole = read_file(dir / "whole.txt");
  std::size_t first_200 = 0;
  for (int k = 0; k < 200; ++k) first_200 = whole.find('\n', first_200) + 1;
  EXPECT_SAME_BYTES(read_file(dir / "x-val.txt") + read_file(dir / "x-test.txt"), whole.substr(0, first_200));
  EXPECT_EQ(run_command(in_dir + "-q --split val=0.1,test=0.1 -o 'x-{split}.txt'").err, "");
}

TEST(StalePieces, MatchOnlyNamesThePatternGives) {
  using dataset::matches_output_pattern;
  EXPECT_TRUE(matches_output_pattern("train-{shard}.tar", {}, "train-00009.tar"));
  EXPECT_TRUE(matches_output_pattern("train-{shard}.tar", {}, "train-123456.tar"));
  EXPECT_FALSE(matches_output_pattern("train-{shard}.tar", {}, "train-0009.tar"));
  EXPECT_FALSE(matches_output_pattern("train-{shard}.tar", {}, "train-00009.tar.bak"));
  EXPECT_FALSE(matches_output_pattern("train-{shard}.tar", {}, "train-0000a.tar"));
  EXPECT_TRUE(matches_output_pattern("d/{split}-{shard}-of-{shards}.jsonl", {"train", "val"}, "d/val-00003-of-00010.jsonl"));
  EXPECT_FALSE(matches_output_pattern("d/{split}-{shard}-of-{shards}.jsonl", {"train", "val"}, "d/dev-00003-of-00010.jsonl"));
  EXPECT_FALSE(matches_output_pattern("{split}-{shard}-of-{shards}.jsonl", {"val"}, "val-00003-of-000010.jsonl"));
  EXPECT_TRUE(matches_output_pattern("{shard}{shards}", {}, "0000300010"));
}

TEST(StalePiecesCli, AreNamedInAWarningAndTheManifestOrRemovedWithClean) {
  TempDir dir;
  write_file(dir / "in.txt", numbered_lines(1000));
  const std::string in_dir = "cd " + dir.path().string() + " && " + kBinary + " --seed 3 in.txt ";
  ASSERT_EQ(run_command(in_dir + "--shards 10 -o 'p-{shard}.txt'").exit_code, 0);
  for (const std::string other : {"p-0009.txt", "p-00009.txt.bak", "q-00009.txt", "p-00010.txt.zst"}) {
    write_file(dir / other, "not a piece of the pattern\n");
  }
  auto r = run_command(in_dir + "--shards 8 -o 'p-{shard}.txt' --manifest m.json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "extshuffle: warning: 2 files of -o 'p-{shard}.txt' not written by this run (an older run's?): "
                   "'p-00008.txt', 'p-00009.txt' (--clean removes them)\n");
  EXPECT_NE(read_file(dir / "m.json").find("\"stale_pieces\": [\n    \"p-00008.txt\",\n    \"p-00009.txt\"\n  ]"),
            std::string::npos)
      << "m.json does not list the stale pieces";
  EXPECT_TRUE(std::filesystem::exists(dir / "p-00009.txt"));
  r = run_command(in_dir + "--shards 8 -o 'p-{shard}.txt' --clean --manifest m.json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_FALSE(std::filesystem::exists(dir / "p-00008.txt"));
  EXPECT_FALSE(std::filesystem::exists(dir / "p-00009.txt"));
  EXPECT_TRUE(std::filesystem::exists(dir / "p-00007.txt"));
  for (const std::string other : {"p-0009.txt", "p-00009.txt.bak", "q-00009.txt", "p-00010.txt.zst"}) {
    EXPECT_TRUE(std::filesystem::exists(dir / other)) << other;
  }
  EXPECT_NE(read_file(dir / "m.json").find("\"clean\": true"), std::string::npos);
  // A failed run removes nothing: an input that does not exist.
  ASSERT_EQ(run_command(in_dir + "--shards 10 -o 'p-{shard}.txt'").exit_code, 0);
  r = run_command("cd " + dir.path().string() + " && " + kBinary + " missing.txt --shards 8 -o 'p-{shard}.txt' --clean");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(std::filesystem::exists(dir / "p-00009.txt"));
  // Splits: only this run's split names count.
  ASSERT_EQ(run_command(in_dir + "--split train=0.5,dev=rest --shards 2 -o 's-{split}-{shard}.txt'").exit_code, 0);
  r = run_command(in_dir + "--split train=0.5,val=rest --shards 2 -o 's-{split}-{shard}.txt' --clean");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(std::filesystem::exists(dir / "s-dev-00000.txt"));
  // --clean without pieces is a usage error.
  r = run_command(in_dir + "--clean -o out.txt");
  EXPECT_EQ(r.exit_code, 2);
}

// docs/cli.md "The permutation": `extshuffle -i 0-$((N-1)) --seed S` prints
// the order a run with seed S applies to any N records: output record k is
// input record number (line k of it), counted from 0.
TEST(PermutationRecipe, IndicesAreTheOrderARunApplies) {
  TempDir dir;
  for (int n : {1, 2, 1000, 5000}) {
    write_file(dir / "in.txt", numbered_lines(n));
    const auto shuffled = run_command(kBinary + " --seed 77 " + (dir / "in.txt").string());
    const auto indices = run_command(kBinary + " --seed 77 -i 0-" + std::to_string(n - 1));
    ASSERT_EQ(shuffled.exit_code, 0);
    ASSERT_EQ(indices.exit_code, 0);
    std::string expected;
    for (std::size_t at = 0; at < indices.out.size();) {
      const std::size_t end = indices.out.find('\n', at);
      expected += "line " + indices.out.substr(at, end - at) + "\n";
      at = end + 1;
    }
    EXPECT_SAME_BYTES(shuffled.out, expected) << n;
  }
}

}  // namespace
}  // namespace extshuffle::testing::dataset_conveniences_cli_test
