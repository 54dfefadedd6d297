// Black-box tests of the extshuffle binary on text lines and JSONL (the
// default format when there is no --record-size): the multiset of lines is
// kept, the order is P(seed, N) whatever the budget, and the bad inputs of
// the text-formats issue behave as shuf users expect. EXTSHUFFLE_BINARY is
// set by CMake.
#include <gtest/gtest.h>

#include <algorithm>
#include <regex>
#include <string>
#include <vector>

#include "support/command.hpp"
#include "support/text_records.hpp"

namespace extshuffle::testing::lines_cli_test {
namespace {

const std::string kBinary = extshuffle_binary();
// The testing knobs: with L = 256, F = 8 and a few hundred KiB of budget,
// 2 and 3 levels of the plan go through disk on a few MB of lines. One
// thread: the knobs make thousands of tiny nodes, each a parallel step whose
// barrier can cost a scheduler time slice on a busy machine (seconds per
// run); ThreadsDoNotChangeTheOutput covers -j.
const std::string kKnobs = " --leaf-records 256 --fanout 8 -j 1 ";

std::vector<std::string> sorted_records(const std::string& text, char terminator = '\n') {
  std::vector<std::string> records = split_records(text, terminator);
  std::sort(records.begin(), records.end());
  return records;
}

// n lines "<i> <filler>", the filler's length varying with i.
std::string numbered_lines(std::uint64_t n, std::uint64_t max_filler = 40) {
  std::string text;
  for (std::uint64_t i = 0; i < n; ++i) {
    text += std::to_string(i) + " " + std::string(((i * 2654435761u) >> 5) % (max_filler + 1), 'a' + i % 26) + "\n";
  }
  return text;
}

// n JSON objects, one per line, some with non-ASCII text.
std::string jsonl_records(std::uint64_t n) {
  std::string text;
  for (std::uint64_t i = 0; i < n; ++i) {
    text += "{\"id\":" + std::to_string(i) + ",\"name\":\"" + (i % 7 == 0 ? "Zürich \xe6\x97\xa5\xe6\x9c\xac" : "plain") +
            "\",\"values\":[" + std::string(i % 13, '1') + "0]}\n";
  }
  return text;
}

std::string prefix_records(const std::string& text, std::size_t k) {
  std::string prefix;
  const auto records = split_records(text);
  for (std::size_t r = 0; r < std::min(k, records.size()); ++r) prefix += records[r];
  return prefix;
}

std::uint32_t passes_of(const std::string& stats_err) {
  std::smatch m;
  if (!std::regex_search(stats_err, m, std::regex("passes=([0-9]+)"))) return 0;
  return static_cast<std::uint32_t>(std::stoul(m[1].str()));
}

TEST(LinesCli, ShufflesLinesIntoAPermutationLikeShuf) {
  TempDir dir;
  const std::string in = (dir / "in.txt").string();
  write_file(in, numbered_lines(20000));
  const auto r = run_command("cd " + dir.path().string() + " && " + kBinary + " in.txt out.txt --seed 3");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "");
  const std::string out = read_file(dir / "out.txt");
  EXPECT_DIFFERENT_BYTES(out, read_file(in));
  EXPECT_EQ(sorted_records(out), sorted_records(read_file(in)));
  // GNU shuf keeps the same multiset (its order is its own).
  const auto shuf = run_command("shuf " + in);
  ASSERT_EQ(shuf.exit_code, 0);
  EXPECT_EQ(sorted_records(out), sorted_records(shuf.out));
  EXPECT_TRUE(std::filesystem::exists(dir / "out.txt"));
  EXPECT_FALSE(std::filesystem::exists(dir / "stxxl.log"));
}

// docs/conventions.md, The contract: N lines take the order P(seed, N) that N fixed-size records
// take; `-i 0-(N-1)` prints exactly that order for the indices.
TEST(LinesCli, LinesTakeTheOrderOfFixedSizeRecords) {
  TempDir dir;
  const std::uint64_t n = 5000;
  write_file(dir / "in.txt", numbered_lines(n));
  const auto lines = run_command(kBinary + " --seed 17 " + (dir / "in.txt").string());
  const auto range = run_command(kBinary + " --seed 17 -i 0-" + std::to_string(n - 1));
  ASSERT_EQ(lines.exit_code, 0) << lines.err;
  ASSERT_EQ(range.exit_code, 0) << range.err;
  std::string indices;
  for (const std::string& line : split_records(lines.out)) indices += line.substr(0, line.find(' ')) + "\n";
  EXPECT_SAME_BYTES(indices, range.out);
}

// The same bytes with the whole input in RAM and with 1 or 2 further levels
// of the plan on disk, from a file and from standard input.
TEST(LinesCli, SameBytesAcrossBudgetsAndStdin) {
  TempDir dir;
  const std::string in = (dir / "in.txt").string();
  write_file(in, numbered_lines(200000, 30));  // ~4.3 MB
  const std::string base = kBinary + kKnobs + "--seed 5 --stats -T " + dir.path().string();
  std::string expected;
  for (const auto& [memory, passes] : {std::pair{"64M", 1u}, std::pair{"2M", 2u}, std::pair{"700K", 3u}}) {
    const auto r = run_command(base + " -S " + memory + " " + in + " " + (dir / "out.txt").string());
    ASSERT_EQ(r.exit_code, 0) << memory << ": " << r.err;
    EXPECT_EQ(passes_of(r.err), passes) << memory << ": " << r.err;
    const std::string out = read_file(dir / "out.txt");
    if (expected.empty()) {
      expected = out;
      EXPECT_EQ(sorted_records(expected), sorted_records(read_file(in)));
    }
    EXPECT_SAME_BYTES(out, expected) << memory;
    // Standard input larger than the budget is spooled to scratch space first.
    const auto piped = run_command("cat " + in + " | " + base + " -S " + memory + " > " + (dir / "pipe.txt").string());
    ASSERT_EQ(piped.exit_code, 0) << memory << ": " << piped.err;
    EXPECT_SAME_BYTES(read_file(dir / "pipe.txt"), expected) << memory;
  }
}

// The thread count never changes the output, in RAM or through disk.
TEST(LinesCli, ThreadsDoNotChangeTheOutput) {
  TempDir dir;
  const std::string in = (dir / "in.txt").string();
  write_file(in, numbered_lines(20000));  // streams at 550K: two levels on disk
  const std::string base = kBinary + " --leaf-records 256 --fanout 8 -q --seed 6 ";
  for (const std::string memory : {"64M", "550K"}) {
    const auto one = run_command(base + "-j 1 -S " + memory + " " + in);
    const auto two = run_command(base + "-j 2 -S " + memory + " " + in);
    const auto three = run_command(base + "-j 3 -S " + memory + " " + in);
    ASSERT_EQ(one.exit_code, 0) << one.err;
    EXPECT_SAME_BYTES(two.out, one.out) << memory;
    EXPECT_SAME_BYTES(three.out, one.out) << memory;
  }
}

// Aligned text files (a parallel corpus: line i of one translates line i of
// the other) shuffled by one permutation stay aligned; counts must agree.
TEST(LinesCli, AlignedTextFilesStayAligned) {
  TempDir dir;
  std::string left, right;
  for (int i = 0; i < 3000; ++i) {
    left += "en " + std::to_string(i) + std::string(i % 9, '.') + "\n";
    right += "fr " + std::to_string(i) + "\n";
  }
  write_file(dir / "en.txt", left);
  write_file(dir / "fr.jsonl", right);
  const auto r = run_command(kBinary + " --seed 4 " + (dir / "en.txt").string() + " " + (dir / "fr.jsonl").string() +
                             " -o " + (dir / "en2.txt").string() + " -o " + (dir / "fr2.jsonl").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto en = split_records(read_file(dir / "en2.txt"));
  const auto fr = split_records(read_file(dir / "fr2.jsonl"));
  ASSERT_EQ(en.size(), 3000u);
  ASSERT_EQ(fr.size(), 3000u);
  for (std::size_t k = 0; k < en.size(); ++k) {
    ASSERT_EQ(std::stoul(en[k].substr(3)), std::stoul(fr[k].substr(3))) << "line " << k;
  }
  EXPECT_DIFFERENT_BYTES(read_file(dir / "en2.txt"), left);
  write_file(dir / "short.txt", right.substr(0, right.size() - 8));  // one line fewer
  const auto mismatch = run_command(kBinary + " --seed 4 " + (dir / "en.txt").string() + " " +
                                    (dir / "short.txt").string() + " -o " + (dir / "a").string() + " -o " +
                                    (dir / "b").string());
  EXPECT_EQ(mismatch.exit_code, 1) << mismatch.err;
  EXPECT_NE(mismatch.err.find("differ in record count"), std::string::npos) << mismatch.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "a"));
}

// -o takes one word, wherever it stands: shuf's own "-o OUTPUT INPUT",
// "INPUT -o OUTPUT" and "INPUT OUTPUT" write the same bytes, and several -o
// interleaved with their inputs still pair them in order.
TEST(LinesCli, OutputOptionTakesOneWordInAnyOrder) {
  TempDir dir;
  const std::string in = (dir / "in.txt").string();
  write_file(in, numbered_lines(1000));
  const std::string positional = (dir / "positional.txt").string();
  ASSERT_EQ(run_command(kBinary + " " + in + " " + positional + " --seed 1").exit_code, 0);
  const auto first = run_command(kBinary + " -o " + (dir / "first.txt").string() + " " + in + " --seed 1");
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const auto last = run_command(kBinary + " " + in + " -o " + (dir / "last.txt").string() + " --seed 1");
  ASSERT_EQ(last.exit_code, 0) << last.err;
  EXPECT_SAME_BYTES(read_file(dir / "first.txt"), read_file(positional));
  EXPECT_SAME_BYTES(read_file(dir / "last.txt"), read_file(positional));
  EXPECT_DIFFERENT_BYTES(read_file(positional), read_file(in));

  write_file(dir / "copy.txt", numbered_lines(1000));
  const auto aligned = run_command(kBinary + " --seed 1 -o " + (dir / "a.txt").string() + " " + in + " -o " +
                                   (dir / "b.txt").string() + " " + (dir / "copy.txt").string());
  ASSERT_EQ(aligned.exit_code, 0) << aligned.err;
  EXPECT_SAME_BYTES(read_file(dir / "a.txt"), read_file(positional));
  EXPECT_SAME_BYTES(read_file(dir / "b.txt"), read_file(positional));
}

TEST(LinesCli, SameSeedSameOutputDifferentSeedDifferentOutput) {
  TempDir dir;
  const std::string in = (dir / "in.txt").string();
  write_file(in, numbered_lines(1000));
  const auto a = run_command(kBinary + " --seed 1 " + in);
  const auto b = run_command(kBinary + " --seed 1 " + in);
  const auto c = run_command(kBinary + " --seed 2 " + in);
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_SAME_BYTES(a.out, b.out);
  EXPECT_DIFFERENT_BYTES(a.out, c.out);
  EXPECT_EQ(sorted_records(a.out), sorted_records(c.out));
}

// JSONL (by extension or --format jsonl) is lines: no header, UTF-8 kept.
TEST(LinesCli, JsonlIsShuffledAsLines) {
  TempDir dir;
  const std::string text = jsonl_records(3000);
  write_file(dir / "in.jsonl", text);
  write_file(dir / "in.ndjson", text);
  const auto by_extension = run_command(kBinary + " --seed 4 " + (dir / "in.jsonl").string());
  ASSERT_EQ(by_extension.exit_code, 0) << by_extension.err;
  EXPECT_EQ(sorted_records(by_extension.out), sorted_records(text));
  EXPECT_DIFFERENT_BYTES(by_extension.out.substr(0, 20), text.substr(0, 20));  // the first line is not kept on top
  for (const std::string& command : {kBinary + " --seed 4 " + (dir / "in.ndjson").string(),
                                     "cat " + (dir / "in.jsonl").string() + " | " + kBinary + " --seed 4 --format jsonl",
                                     kBinary + " --seed 4 --format lines " + (dir / "in.jsonl").string()}) {
    const auto r = run_command(command);
    ASSERT_EQ(r.exit_code, 0) << command << ": " << r.err;
    EXPECT_SAME_BYTES(r.out, by_extension.out) << command;
  }
  // Budgets forcing disk levels give the same bytes.
  const auto small = run_command(kBinary + kKnobs + "--seed 4 -S 700K " + (dir / "in.jsonl").string());
  const auto large = run_command(kBinary + kKnobs + "--seed 4 -S 64M " + (dir / "in.jsonl").string());
  ASSERT_EQ(small.exit_code, 0) << small.err;
  EXPECT_SAME_BYTES(small.out, large.out);
  // --header keeps the first line on top, for JSONL as for any lines.
  const auto header = run_command(kBinary + " --seed 4 --header=1 " + (dir / "in.jsonl").string());
  ASSERT_EQ(header.exit_code, 0) << header.err;
  EXPECT_SAME_BYTES(split_records(header.out)[0], split_records(text)[0]);
  EXPECT_EQ(sorted_records(header.out), sorted_records(text));
}

// Bytes that are not newlines pass through: invalid UTF-8, lone high bytes,
// carriage returns (CRLF files keep their CRs, as shuf keeps them).
TEST(LinesCli, InvalidUtf8AndCarriageReturnsPassThrough) {
  TempDir dir;
  const std::string text = "caf\xc3\xa9\n\xff\xfe\xfd\n\xc3(\n\xed\xa0\x80 surrogate\nplain\r\nwindows\r\n\r\n";
  write_file(dir / "in.txt", text);
  const auto r = run_command(kBinary + " --seed 1 " + (dir / "in.txt").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(sorted_records(r.out), sorted_records(text));
  EXPECT_EQ(r.out.size(), text.size());
}

// A NUL in the first 64 KiB: auto mode refuses the input as binary with a
// hint (exit 2); --format lines keeps the NUL inside its line; -z cuts at NUL.
TEST(LinesCli, NulBytesInLineMode) {
  TempDir dir;
  const std::string text("one\ntw\0o\nthree\n", 15);
  write_file(dir / "in.txt", text);
  const auto refused = run_command(kBinary + " --seed 1 " + (dir / "in.txt").string() + " " + (dir / "out.txt").string());
  EXPECT_EQ(refused.exit_code, 2) << refused.err;
  EXPECT_TRUE(std::regex_search(refused.err, std::regex("^extshuffle: .*in\\.txt.*binary.*--format lines.*\n$")))
      << refused.err;
  EXPECT_EQ(std::count(refused.err.begin(), refused.err.end(), '\n'), 1) << refused.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "out.txt"));

  const auto lines = run_command(kBinary + " --seed 1 --format lines " + (dir / "in.txt").string());
  ASSERT_EQ(lines.exit_code, 0) << lines.err;
  EXPECT_EQ(sorted_records(lines.out), sorted_records(text));

  const std::string zero("a\nb\0c\0d", 7);  // the last record lacks its NUL: it gets one
  write_file(dir / "zero.txt", zero);
  const auto z = run_command(kBinary + " --seed 1 -z " + (dir / "zero.txt").string());
  ASSERT_EQ(z.exit_code, 0) << z.err;
  EXPECT_EQ(sorted_records(z.out, '\0'), sorted_records(zero + '\0', '\0'));
  const auto shuf = run_command("shuf -z " + (dir / "zero.txt").string());
  EXPECT_EQ(sorted_records(z.out, '\0'), sorted_records(shuf.out, '\0'));
}

TEST(LinesCli, EmptyFileGivesEmptyOutput) {
  TempDir dir;
  write_file(dir / "empty.txt", "");
  for (const std::string format : {"", "--format lines ", "--format jsonl ", "-z "}) {
    const auto r = run_command(kBinary + " --seed 1 " + format + (dir / "empty.txt").string() + " " +
                               (dir / "out.txt").string());
    EXPECT_EQ(r.exit_code, 0) << format << r.err;
    EXPECT_EQ(r.err, "") << format;
    EXPECT_TRUE(std::filesystem::exists(dir / "out.txt")) << format;
    EXPECT_SAME_BYTES(read_file(dir / "out.txt"), "") << format;
  }
  const auto piped = run_command("printf \"\" | " + kBinary + " --seed 1");
  EXPECT_EQ(piped.exit_code, 0) << piped.err;
  EXPECT_EQ(piped.out, "");
}

// As shuf: the last line gets a newline when it lacks one, also when it is
// the only line and when the input is too large for the budget.
TEST(LinesCli, LastLineWithoutNewlineGetsOne) {
  TempDir dir;
  write_file(dir / "cut.txt", "a\nb\nc");
  const auto r = run_command(kBinary + " --seed 1 " + (dir / "cut.txt").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(sorted_records(r.out), (std::vector<std::string>{"a\n", "b\n", "c\n"}));
  write_file(dir / "one.txt", "only");
  EXPECT_EQ(run_command(kBinary + " --seed 1 " + (dir / "one.txt").string()).out, "only\n");
  EXPECT_EQ(run_command("printf x | " + kBinary + " --seed 1").out, "x\n");

  std::string big = numbered_lines(100000);
  write_file(dir / "big.txt", big);
  big.pop_back();
  write_file(dir / "big_cut.txt", big);
  const std::string base = kBinary + kKnobs + "--seed 2 -S 700K ";
  const auto whole = run_command(base + (dir / "big.txt").string());
  const auto cut = run_command(base + (dir / "big_cut.txt").string());
  ASSERT_EQ(cut.exit_code, 0) << cut.err;
  EXPECT_SAME_BYTES(cut.out, whole.out);
}

// Empty lines are records (as for shuf) unless --skip-empty drops the blank
// ones; the others then come out as from the file without blank lines.
TEST(LinesCli, EmptyLinesAreRecordsUnlessSkipped) {
  TempDir dir;
  write_file(dir / "blank.txt", "\n\n\n");
  EXPECT_EQ(run_command(kBinary + " --seed 1 " + (dir / "blank.txt").string()).out, "\n\n\n");
  std::string with_blanks = " \n", without_blanks;
  for (int i = 0; i < 5000; ++i) {
    const std::string line = "line " + std::to_string(i) + "\n";
    with_blanks += line + (i % 3 == 0 ? "\n" : "") + (i % 7 == 0 ? "\t \r\n" : "");
    without_blanks += line;
  }
  write_file(dir / "with.txt", with_blanks);
  write_file(dir / "without.txt", without_blanks);
  const auto kept = run_command(kBinary + " --seed 9 " + (dir / "with.txt").string());
  EXPECT_EQ(sorted_records(kept.out), sorted_records(with_blanks));
  for (const std::string memory : {"64M", "700K"}) {
    const auto skipped = run_command(kBinary + kKnobs + "--seed 9 --skip-empty -S " + memory + " " + (dir / "with.txt").string());
    const auto plain = run_command(kBinary + kKnobs + "--seed 9 -S " + memory + " " + (dir / "without.txt").string());
    ASSERT_EQ(skipped.exit_code, 0) << skipped.err;
    EXPECT_SAME_BYTES(skipped.out, plain.out) << memory;
  }
}

// `... | extshuffle | head -n 5`: a reader that stops early ends the run
// quietly: no message, status 141 (SIGPIPE) or 0, and head gets the first
// five lines of the full shuffle.
TEST(LinesCli, PipelineIntoHeadEndsQuietly) {
  TempDir dir;
  const std::string in = (dir / "in.txt").string();
  write_file(in, numbered_lines(300000));  // ~6.5 MB: far more than the pipe holds
  const std::string err = (dir / "err.txt").string();
  const auto full = run_command(kBinary + " --seed 1 " + in);
  // -q silences the testing knobs' warning: stderr must stay empty.
  const std::string knobs = kBinary + kKnobs + "-q --seed 1 ";
  const auto full_knobs = run_command(knobs + "-S 64M " + in);
  ASSERT_EQ(full_knobs.exit_code, 0) << full_knobs.err;
  const std::pair<std::string, const std::string*> cases[] = {
      {"cat " + in + " | " + kBinary + " --seed 1", &full.out},
      {kBinary + " --seed 1 " + in, &full.out},
      // Standard input larger than the budget, two levels on disk.
      {"cat " + in + " | " + knobs + "-S 700K", &full_knobs.out}};
  for (const auto& [producer, expected] : cases) {
    const auto r = run_command(producer + " 2> " + err + " | head -n 5; echo status=${PIPESTATUS[" +
                               (producer.starts_with("cat") ? "1" : "0") + "]} >&2");
    EXPECT_TRUE(std::regex_search(r.err, std::regex("status=(0|141)\n"))) << producer << ": " << r.err;
    EXPECT_SAME_BYTES(read_file(err), "") << producer << ": a closed pipe is not an error";
    EXPECT_SAME_BYTES(r.out, prefix_records(*expected, 5)) << producer;
  }
}

// -n K prints the first K records of the full shuffle, from a file or a
// pipe, in RAM or through disk; K beyond N prints all N.
TEST(LinesCli, HeadCountIsThePrefixOfTheFullShuffle) {
  TempDir dir;
  const std::uint64_t n = 40000;
  const std::string in = (dir / "in.txt").string();
  write_file(in, numbered_lines(n));
  for (const std::string memory : {"64M", "600K"}) {
    const std::string base = kBinary + kKnobs + "--seed 3 -S " + memory + " ";
    const auto full = run_command(base + in);
    ASSERT_EQ(full.exit_code, 0) << full.err;
    for (std::uint64_t k : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{777}, n - 1, n, n + 1, 10 * n}) {
      const auto head = run_command(base + "-n " + std::to_string(k) + " " + in);
      ASSERT_EQ(head.exit_code, 0) << head.err;
      EXPECT_SAME_BYTES(head.out, prefix_records(full.out, k)) << "k " << k << " memory " << memory;
      const auto piped = run_command("cat " + in + " | " + base + "--head-count " + std::to_string(k));
      EXPECT_SAME_BYTES(piped.out, head.out) << "k " << k << " memory " << memory;
    }
  }
  // A header stays on top and is not counted by -n.
  const auto header = run_command(kBinary + " --seed 3 --header -n 2 " + in);
  EXPECT_EQ(split_records(header.out).size(), 3u) << header.out;
  EXPECT_EQ(split_records(header.out)[0], "0 \n");
}

// -e and -i as in shuf: each item exactly once, one per line; -n takes a prefix.
TEST(LinesCli, EchoAndRangeAsShuf) {
  const auto echo = run_command(kBinary + " --seed 2 -e alpha \"two words\" gamma \"\" delta");
  ASSERT_EQ(echo.exit_code, 0) << echo.err;
  EXPECT_EQ(sorted_records(echo.out), sorted_records(run_command("shuf -e alpha \"two words\" gamma \"\" delta").out));
  const auto range = run_command(kBinary + " --seed 2 -i 10-1009");
  ASSERT_EQ(range.exit_code, 0) << range.err;
  EXPECT_EQ(sorted_records(range.out), sorted_records(run_command("shuf -i 10-1009").out));
  EXPECT_EQ(split_records(range.out).size(), 1000u);
  const auto head = run_command(kBinary + " --seed 2 -i 10-1009 -n 7");
  EXPECT_SAME_BYTES(head.out, prefix_records(range.out, 7));
  const auto beyond = run_command(kBinary + " --seed 2 -i 10-1009 -n 5000");
  EXPECT_SAME_BYTES(beyond.out, range.out);
  EXPECT_EQ(run_command(kBinary + " --seed 2 -i 7-7").out, "7\n");
  // The same seed gives -e the order it gives a file of the same lines.
  TempDir dir;
  write_file(dir / "words.txt", "alpha\ntwo words\ngamma\n\ndelta\n");
  EXPECT_SAME_BYTES(run_command(kBinary + " --seed 2 " + (dir / "words.txt").string()).out, echo.out);
}

}  // namespace
}  // namespace extshuffle::testing::lines_cli_test
