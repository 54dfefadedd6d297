// Black-box tests of shuf's habits beyond shuf.sh's own checks
// (shuf_compat_test.cpp): --repeat on every input format, from RAM and with
// the records or the text index in scratch space; --random-source; -i with
// -n over huge ranges (the same output as the full shuffle where both run);
// -z with -e and -i; long option prefixes; a failing input is exit 1 in any
// argument order and leaves an existing output alone. Probabilistic checks
// state their false-failure odds.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "support/command.hpp"
#include "support/statistics.hpp"
#include "support/text_records.hpp"
#include "support/tools.hpp"

namespace extshuffle::testing::shuf_habits_cli_test {
namespace {

const std::string kBinary = extshuffle_binary();

std::string numbered(int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += "line " + std::to_string(i) + "\n";
  return out;
}

// --repeat on text: every output record is an input record, the output does
// not depend on --memory (records and index in RAM, or read from the input
// and from scratch space one draw at a time), and -n K + more only appends.
TEST(RepeatCli, TextDrawsAreInputRecordsWhateverTheBudget) {
  TempDir dir;
  // 0.7 MB of records and 0.5 MB of index: beyond half and a quarter of -S 1M.
  write_file(dir / "in.txt", numbered(60000));
  const std::string base = kBinary + " -r --seed 4 -T " + dir.path().string() + " " + (dir / "in.txt").string();
  const auto in_ram = run_command(base + " -n 1500");
  const auto on_disk = run_command(base + " -n 1500 -S 1M");
  const auto longer = run_command(base + " -n 1700 -S 100K");
  ASSERT_EQ(in_ram.exit_code, 0) << in_ram.err;
  ASSERT_EQ(on_disk.exit_code, 0) << on_disk.err;
  ASSERT_EQ(longer.exit_code, 0) << longer.err;
  EXPECT_SAME_BYTES(on_disk.out, in_ram.out);
  EXPECT_SAME_BYTES(longer.out.substr(0, in_ram.out.size()), in_ram.out);
  const auto records = split_records(in_ram.out);
  ASSERT_EQ(records.size(), 1500u);
  const std::string input = read_file(dir / "in.txt");
  for (const std::string& r : records) EXPECT_NE(input.find(r), std::string::npos) << r;
  // 1500 draws from 60000 repeat one with probability 1 - e^-18.7 (false
  // failure 7e-9): draws with replacement, not a shuffle's prefix.
  EXPECT_LT(std::set<std::string>(records.begin(), records.end()).size(), 1500u);
}

TEST(RepeatCli, CsvKeepsItsHeaderOnceAndQuotedNewlines) {
  SKIP_WITHOUT("python3");
  TempDir dir;
  write_file(dir / "in.csv", "id,text\n1,\"a\nb\"\n2,plain\n3,\"x,y\"");  // the last record lacks its newline
  const auto r = run_command(kBinary + " -r -n 50 --seed 2 " + (dir / "in.csv").string() +
                             " | /usr/bin/python3 -c \"import csv,sys; rows=list(csv.reader(sys.stdin)); "
                             "print(rows[0], len(rows), sorted(set(r[0] for r in rows[1:])))\"");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Odds that one of 3 records is missing from 50 draws: 3 x (2/3)^50 < 1e-8.
  EXPECT_EQ(r.out, "['id', 'text'] 51 ['1', '2', '3']\n");
}

TEST(RepeatCli, SkipEmptyNeverDrawsBlankLines) {
  TempDir dir;
  write_file(dir / "in.txt", "a\n\n  \nb\n \t\nc");
  const auto r = run_command(kBinary + " -r -n 300 --skip-empty --seed 8 " + (dir / "in.txt").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto records = split_records(r.out);
  EXPECT_EQ(records.size(), 300u);
  EXPECT_EQ(std::set<std::string>(records.begin(), records.end()), (std::set<std::string>{"a\n", "b\n", "c\n"}));
}

TEST(RepeatCli, FixedRecordsFromRamAndByOffsetAgree) {
  TempDir dir;
  const auto make = run_command("head -c 8000000 /dev/urandom > " + (dir / "in.bin").string());
  ASSERT_EQ(make.exit_code, 0);
  const std::string base = kBinary + " -r -n 5000 --record-size 16 --seed 6 " + (dir / "in.bin").string();
  const auto in_ram = run_command(base + " | md5sum");
  const auto by_offset = run_command(base + " -S 11M | md5sum");  // 8 MB > half of the budget
  ASSERT_EQ(in_ram.exit_code, 0) << in_ram.err;
  EXPECT_SAME_BYTES(by_offset.out, in_ram.out);
  const auto size = run_command(base + " | wc -c");
  EXPECT_EQ(size.out, "80000\n");
}

// The output is a .npy of K rows that numpy reads, each row one of the input's.
TEST(RepeatCli, NpyOutputHeaderGivesTheDrawnRowCount) {
  SKIP_WITHOUT("python3-numpy");
  TempDir dir;
  const std::string in = (dir / "in.npy").string(), out = (dir / "out.npy").string();
  const auto r = run_command(
      "/usr/bin/python3 -c \"import numpy as np, sys; np.save(sys.argv[1], np.arange(40.0).reshape(10, 4))\" " + in +
      " && " + kBinary + " -r -n 123 --seed 1 " + in + " -o " + out +
      " && /usr/bin/python3 -c \"import numpy as np, sys; a = np.load(sys.argv[1]); "
      "print(a.shape, a.dtype, bool(((a[:, 0] % 4 == 0) & (a[:, 1] == a[:, 0] + 1)).all()))\" " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "(123, 4) float64 True\n");
  const auto endless = run_command(kBinary + " -r " + in);
  EXPECT_EQ(endless.exit_code, 2);
  EXPECT_EQ(endless.err, "extshuffle: --repeat on a .npy array needs -n K: its header must give the row count\n");
}

TEST(RepeatCli, EmptyInputHasNothingToRepeat) {
  TempDir dir;
  write_file(dir / "empty.txt", "");
  const auto r = run_command(kBinary + " -r " + (dir / "empty.txt").string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "extshuffle: input '" + (dir / "empty.txt").string() + "': no records to repeat\n");
  const auto range = run_command(kBinary + " -r -i 5-4");
  EXPECT_EQ(range.exit_code, 1);
  for (const char* option : {"--verify", "--dry-run"}) {
    const auto usage = run_command(kBinary + " -r -i 1-5 " + std::string(option));
    EXPECT_EQ(usage.exit_code, 2) << option;
  }
}

// The same file gives the same output, which is that of --seed <its first 8
// bytes, little-endian>; a short file, a missing one and --seed with it fail.
TEST(RandomSourceCli, FirstEightBytesAreTheSeed) {
  TempDir dir;
  write_file(dir / "source", std::string("\x2a\x01\0\0\0\0\0\0 and anything after", 27));
  const std::string source = (dir / "source").string();
  const auto one = run_command(kBinary + " -i 1-1000 --random-source=" + source);
  const auto two = run_command(kBinary + " -i 1-1000 --random-source " + source);
  const auto seed = run_command(kBinary + " -i 1-1000 --seed 298");  // 0x012a
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_SAME_BYTES(one.out, two.out);
  EXPECT_SAME_BYTES(one.out, seed.out);
  const auto pipe = run_command("head -c 8 " + source + " | " + kBinary + " -i 1-1000 --random-source=/dev/stdin");
  EXPECT_SAME_BYTES(pipe.out, seed.out);
  write_file(dir / "short", "abc");
  const auto shorter = run_command(kBinary + " -i 1-5 --random-source=" + (dir / "short").string());
  EXPECT_EQ(shorter.exit_code, 1);
  EXPECT_EQ(shorter.err, "extshuffle: random source '" + (dir / "short").string() + "': holds 3 bytes, the seed needs 8\n");
  const auto missing = run_command(kBinary + " -i 1-5 --random-source=" + (dir / "nope").string());
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_EQ(missing.err, "extshuffle: cannot open random source '" + (dir / "nope").string() +
                             "': No such file or directory\n");
  const auto both = run_command(kBinary + " -i 1-5 --seed 3 --random-source=" + source);
  EXPECT_EQ(both.exit_code, 2);
}

// -i LO-HI -n K traces K positions back through the plan when that is
// cheaper: the same numbers as the full shuffle's first K (testing knobs make
// a 3-level plan of 200000 numbers, where the full shuffle is quick).
TEST(InputRangeCli, HeadOfAHugeRangeIsTheHeadOfItsShuffle) {
  const std::string knobs = kBinary + " -q --leaf-records 256 --fanout 8 --seed 12 -i 1000-200999";
  const auto full = run_command(knobs + " | head -n 40");
  const auto head = run_command(knobs + " -n 40");
  ASSERT_EQ(head.exit_code, 0) << head.err;
  EXPECT_SAME_BYTES(head.out, full.out);
  // (The shipped constants: tests/modes/permutation_prefix_test.cpp.)
  // The largest range the plan orders (2^52 numbers) and every larger one:
  // quick (bounded in CPU seconds, which a busy machine does not stretch).
  const auto planned = run_command("ulimit -t 10 && " + kBinary + " --seed 1 -i 1-4503599627370496 -n 5");
  const auto sampled = run_command("ulimit -t 10 && " + kBinary + " --seed 1 -i 0-18446744073709551615 -n 5 -z");
  EXPECT_EQ(split_records(planned.out).size(), 5u) << planned.err;
  EXPECT_EQ(split_records(sampled.out, '\0').size(), 5u) << sampled.err;
  const auto endless = run_command(kBinary + " -i 0-18446744073709551615");
  EXPECT_EQ(endless.exit_code, 2);
  EXPECT_NE(endless.err.find("give -n K"), std::string::npos) << endless.err;
}

// A range beyond the plan is sampled uniformly: 20000 numbers of all 2^64,
// binned by their top 6 bits (chi-square, false failure 1e-6), all distinct,
// and -n K+more only appends.
TEST(InputRangeCli, SampleOfTheWholeRangeIsUniform) {
  const std::string base = kBinary + " --seed 77 -i 0-18446744073709551615";
  const auto r = run_command(base + " -n 20000");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::uint64_t> counts(64);
  std::set<std::string> seen;
  for (const std::string& line : split_records(r.out)) {
    counts[std::stoull(line) >> 58]++;
    seen.insert(line);
  }
  EXPECT_EQ(seen.size(), 20000u);
  const std::vector<double> p(64, 1.0 / 64);
  EXPECT_GT(pooled_chi_square(counts, p).p_value, 1e-6);
  const auto shorter = run_command(base + " -n 100");
  EXPECT_SAME_BYTES(r.out.substr(0, shorter.out.size()), shorter.out);
}

TEST(LongOptionsCli, UnambiguousPrefixesWorkAsInGetopt) {
  EXPECT_SAME_BYTES(run_command(kBinary + " --rep --head-c=4 --se=5 -i 1-3").out,
                    run_command(kBinary + " --repeat --head-count 4 --seed 5 -i 1-3").out);
  EXPECT_SAME_BYTES(run_command(kBinary + " --zero -i 1-1").out, std::string("1\0", 2));
  const auto ambiguous = run_command(kBinary + " --head -i 1-3");  // --head-count or --header
  EXPECT_EQ(ambiguous.exit_code, 2);
}

// A failing input is exit 1 in every argument order, and an existing output
// file keeps its bytes, its inode and its mode.
TEST(FailingInputCli, ExitsOneInAnyOrderAndLeavesTheOutput) {
  TempDir dir;
  const std::string out = (dir / "out.txt").string(), missing = (dir / "missing.txt").string();
  write_file(dir / "bad.csv", "a,b\n1,\"open\n");
  const std::string bad = (dir / "bad.csv").string();
  write_file(dir / "out.txt", "precious\n");
  run_command("chmod 640 " + out);
  const auto before = run_command("stat -c %i.%a.%s " + out).out;
  const std::vector<std::string> commands{
      missing + " -o " + out,           "-o " + out + " " + missing,       missing + " " + out,
      "-n 3 " + missing + " -o " + out, "--seed 1 -o " + out + " -n 2 " + missing,
      "-r -n 5 " + missing + " -o " + out, "-o " + out + " -r " + missing,
      bad + " -o " + out,               "-o " + out + " --seed 3 " + bad,  "-r -n 4 -o " + out + " " + bad,
      "-i 1-9 --random-source=" + missing + " -o " + out, "-o " + out + " --random-source " + missing + " " + bad};
  for (const std::string& args : commands) {
    const auto r = run_command(kBinary + " " + args);
    EXPECT_EQ(r.exit_code, 1) << args << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_SAME_BYTES(read_file(dir / "out.txt"), "precious\n") << args;
    EXPECT_EQ(run_command("stat -c %i.%a.%s " + out).out, before) << args;
  }
  // Nothing else was left in the directory.
  EXPECT_EQ(run_command("ls -A " + dir.path().string()).out, "bad.csv\nout.txt\n");
}

}  // namespace
}  // namespace extshuffle::testing::shuf_habits_cli_test
