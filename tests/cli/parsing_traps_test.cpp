// The command line as documented (docs/cli.md), and its small traps: --seed
// is decimal or 0x hex (leading zeros decimal, never octal); an empty value
// is a usage error for every option, "--memory=" too; -n takes any count; split names '.' and
// '..' and unknown placeholders are refused; binary input under an explicit
// text --format is refused; --help names each value in the user's words;
// -v carries the plan and phase lines and no STXXL chatter; a dry run of
// -i/-e writes nothing; a dry run counts the decompression spool and states
// the scratch space and the descriptors.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <string>

#include "support/command.hpp"

namespace extshuffle::testing::parsing_traps_test {
namespace {

const std::string kBinary = extshuffle_binary();

class Parsing : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string text;
    for (int k = 0; k < 200; ++k) text += std::to_string(k) + "\n";
    write_file(dir_ / "in.txt", text);
  }
  CommandResult run(const std::string& arguments) {
    return run_command("cd " + dir_.path().string() + " && " + kBinary + " " + arguments);
  }
  TempDir dir_;
};

TEST_F(Parsing, SeedIsDecimalOrHexNeverOctal) {
  const auto ten = run("--seed 10 in.txt");
  ASSERT_EQ(ten.exit_code, 0) << ten.err;
  EXPECT_SAME_BYTES(run("--seed 010 in.txt").out, ten.out) << "010 read as octal";
  EXPECT_SAME_BYTES(run("--seed 0xa in.txt").out, ten.out);
  const auto eight = run("--seed 08 in.txt");
  EXPECT_EQ(eight.exit_code, 0) << eight.err;
  EXPECT_SAME_BYTES(eight.out, run("--seed 8 in.txt").out);
  EXPECT_EQ(run("--seed 0x in.txt").exit_code, 2);
}

TEST_F(Parsing, AnEmptyValueIsAUsageError) {
  for (const std::string option : {"--seed", "-S", "-T", "--shards", "--record-size", "-o", "--manifest", "-i"}) {
    SCOPED_TRACE(option);
    const auto r = run(option + " \"\" in.txt");
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_TRUE(std::regex_search(r.err, std::regex("^extshuffle: invalid .*''"))) << r.err;
  }
}

// "--memory=" (a script's "--memory=$UNSET") once took the next word as its
// value: the error named in.txt, or a valid next word ran with it.
TEST_F(Parsing, AnEmptyAttachedValueNamesItsOption) {
  for (const std::string typed : {"--memory=", "--mem=", "--seed=", "--threads=", "--header=", "--verify="}) {
    SCOPED_TRACE(typed);
    const std::string name = typed == "--mem=" ? "--memory" : typed.substr(0, typed.size() - 1);
    for (const std::string next : {"in.txt", "5"}) {
      const auto r = run(typed + " " + next + " in.txt");
      EXPECT_EQ(r.exit_code, 2) << r.err;
      EXPECT_EQ(r.out, "");
      EXPECT_EQ(r.err, "extshuffle: invalid " + name + " '': expected a value, not an empty one\n");
    }
  }
  // After "--", a word is an operand, not an option.
  const auto operand = run("-- --memory=");
  EXPECT_EQ(operand.exit_code, 1) << operand.err;
  EXPECT_NE(operand.err.find("--memory="), std::string::npos) << operand.err;
}

TEST_F(Parsing, AnyHeadCountIsAccepted) {
  const auto all = run("--seed 3 in.txt");
  for (const std::string count : {"18446744073709551615", "18446744073709551616", "99999999999999999999999"}) {
    const auto r = run("--seed 3 -n " + count + " in.txt");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_SAME_BYTES(r.out, all.out);
  }
}

TEST_F(Parsing, SplitNamesDotAndDotDotAreRefused) {
  for (const std::string name : {".", ".."}) {
    const auto r = run("in.txt --split '" + name + "=0.5,y=0.5' -o 'sub/{split}/f.txt'");
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("split name '" + name + "'"), std::string::npos) << r.err;
  }
  EXPECT_FALSE(std::filesystem::exists(dir_ / "f.txt"));
}

TEST_F(Parsing, UnknownPlaceholdersAreRefused) {
  std::filesystem::create_directory(dir_ / "out");
  const auto r = run("in.txt --shards 2 -o 'out/s-{num_shards}-{shard}.txt'");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("unknown placeholder {num_shards}"), std::string::npos) << r.err;
  EXPECT_TRUE(std::filesystem::is_empty(dir_ / "out"));
}

TEST_F(Parsing, BinaryUnderATextFormatIsRefused) {
  std::filesystem::create_directory(dir_ / "d");
  write_file(dir_ / "d" / "a.jsonl", "{\"a\": 1}\n");
  std::string npy("\x93NUMPY\x01\x00", 8);
  std::string header = "{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }";
  header.resize(118 - 1, ' ');
  header += '\n';
  npy += static_cast<char>(header.size());
  npy += '\0';
  npy += header + std::string(16, '\1');
  write_file(dir_ / "d" / "x.npy", npy);
  auto r = run("--format jsonl d -o out.jsonl");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("is a .npy array"), std::string::npos) << r.err;
  write_file(dir_ / "nul.csv", std::string("a,b\n1,\0\n", 8));
  r = run("--format csv nul.csv");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("NUL bytes"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir_ / "out.jsonl"));
}

TEST_F(Parsing, HelpNamesValuesInTheUsersWords) {
  const auto r = run("--help");
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out.find("TEXT"), std::string::npos) << r.out;
  for (const std::string want : {"--shards K", "--seed N", "-S,--memory SIZE", "-n,--head-count K", ".gz", ".zst"}) {
    EXPECT_NE(r.out.find(want), std::string::npos) << want;
  }
}

TEST_F(Parsing, VerboseShowsThePlanAndNoStxxlChatter) {
  const auto r = run("-v --seed 1 in.txt -o out.txt");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("extshuffle: plan:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("extshuffle: commit:"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("STXXL-ERRMSG"), std::string::npos) << r.err;
}

TEST_F(Parsing, DryRunOfGeneratedInputWritesNothing) {
  for (const std::string mode : {"-i 1-5", "-e a b c"}) {
    const auto r = run("--dry-run " + mode + " -o out.txt");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("plan:"), std::string::npos) << r.out;
    EXPECT_FALSE(std::filesystem::exists(dir_ / "out.txt")) << mode;
  }
}

TEST_F(Parsing, DryRunCountsTheSpoolAndStatesScratchAndDescriptors) {
  ASSERT_EQ(run("in.txt -o in.txt.gz && true").exit_code, 0);
  const auto dry = run("--dry-run --seed 1 in.txt.gz -o out.txt");
  ASSERT_EQ(dry.exit_code, 0) << dry.err;
  EXPECT_NE(dry.out.find("scratch space: up to"), std::string::npos) << dry.out;
  EXPECT_NE(dry.out.find("descriptors: up to"), std::string::npos) << dry.out;
  const auto real = run("--stats --seed 1 in.txt.gz -o out.txt");
  ASSERT_EQ(real.exit_code, 0) << real.err;
  std::smatch dry_written, real_written;
  ASSERT_TRUE(std::regex_search(dry.out, dry_written, std::regex("([0-9]+) bytes written")));
  ASSERT_TRUE(std::regex_search(real.err, real_written, std::regex("bytes_written=([0-9]+)")));
  // The spool (the decompressed input) is written to scratch space by both.
  EXPECT_GE(std::stoull(dry_written[1]), std::stoull(real_written[1]));
}

}  // namespace
}  // namespace extshuffle::testing::parsing_traps_test
