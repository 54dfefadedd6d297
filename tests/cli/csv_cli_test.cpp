// Black-box tests of the extshuffle binary on CSV and TSV: records whose
// quoted fields hold newlines move whole (RFC 4180), the header stays on
// top, the order is P(seed, N) whatever the budget, and malformed input is a
// one-line error naming the file. EXTSHUFFLE_BINARY is set by CMake.
#include <gtest/gtest.h>

#include <algorithm>
#include <regex>
#include <string>
#include <vector>

#include "support/command.hpp"
#include "support/tools.hpp"

namespace extshuffle::testing::csv_cli_test {
namespace {

const std::string kBinary = extshuffle_binary();
// The testing knobs (2 and 3 disk levels on a few MB), with one thread for
// speed on busy machines; lines_cli_test checks that -j does not matter.
const std::string kKnobs = " --leaf-records 256 --fanout 8 -j 1 ";

// Splits CSV text into records by quote parity: a newline ends a record when
// the quotes before it (in that record) are even in number. Independent of
// the parser under test; exact for the data these tests write, where every
// quote belongs to a quoted field (a literal quote inside an unquoted field
// would break parity; the test of that case compares whole outputs instead).
std::vector<std::string> csv_records(const std::string& text) {
  std::vector<std::string> records;
  std::string record;
  bool inside = false;
  for (const char c : text) {
    record += c;
    if (c == '"') inside = !inside;
    if (c == '\n' && !inside) {
      records.push_back(record);
      record.clear();
    }
  }
  if (!record.empty()) records.push_back(record);
  return records;
}

std::vector<std::string> sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

std::string header_line() { return "id,name,comment,amount\n"; }

// Record i: its index first, then fields that are plain, quoted with a
// comma, quoted with doubled quotes, quoted across two or three lines, or
// empty and quoted, depending on i.
std::string csv_record(std::uint64_t i, const std::string& newline = "\n") {
  std::string comment;
  switch (i % 6) {
    case 0: comment = "plain"; break;
    case 1: comment = "\"with, comma\""; break;
    case 2: comment = "\"said \"\"hi\"\"\""; break;
    case 3: comment = "\"two" + newline + "lines\""; break;
    case 4: comment = "\"three" + newline + newline + "lines, \"\"quoted\"\"\""; break;
    default: comment = "\"\""; break;
  }
  return std::to_string(i) + ",name" + std::string(i % 17, 'x') + "," + comment + "," + std::to_string(i * 3 % 1000) +
         ".50" + newline;
}

std::string csv_body(std::uint64_t n, const std::string& newline = "\n") {
  std::string text;
  for (std::uint64_t i = 0; i < n; ++i) text += csv_record(i, newline);
  return text;
}

std::uint32_t passes_of(const std::string& stats_err) {
  std::smatch m;
  if (!std::regex_search(stats_err, m, std::regex("passes=([0-9]+)"))) return 0;
  return static_cast<std::uint32_t>(std::stoul(m[1].str()));
}

TEST(CsvCli, QuotedRecordsMoveWholeAndTheHeaderStaysOnTop) {
  SKIP_WITHOUT("python3");
  TempDir dir;
  const std::string body = csv_body(5000);
  write_file(dir / "in.csv", header_line() + body);
  const auto r = run_command(kBinary + " --seed 3 " + (dir / "in.csv").string() + " " + (dir / "out.csv").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  const std::string out = read_file(dir / "out.csv");
  ASSERT_EQ(out.substr(0, header_line().size()), header_line());
  const std::string shuffled = out.substr(header_line().size());
  EXPECT_DIFFERENT_BYTES(shuffled, body);
  EXPECT_EQ(sorted(csv_records(shuffled)), sorted(csv_records(body)));
  // Python's csv module reads the same rows back: the file is still valid CSV.
  const auto python = run_command("/usr/bin/python3 -c \"import csv,sys; rows=list(csv.reader(open(sys.argv[1], "
                                  "newline=str()))); print(len(rows), rows[0])\" " + (dir / "out.csv").string());
  EXPECT_EQ(python.out, "5001 ['id', 'name', 'comment', 'amount']\n") << python.err;
}

// docs/conventions.md, The contract: N CSV records take the order `-i 0-(N-1)` prints; the same
// bytes in RAM and with 1 or 2 further levels of the plan on disk, from a
// file and from standard input (--format csv).
TEST(CsvCli, SameBytesAcrossBudgetsInTheOrderOfFixedSizeRecords) {
  TempDir dir;
  const std::uint64_t n = 100000;
  const std::string in = (dir / "in.csv").string();
  write_file(in, header_line() + csv_body(n));  // ~4.2 MB
  const std::string base = kBinary + kKnobs + "--seed 8 --stats -T " + dir.path().string();
  const auto order = run_command(kBinary + kKnobs + "--seed 8 -q -i 0-" + std::to_string(n - 1));
  ASSERT_EQ(order.exit_code, 0) << order.err;
  std::string expected;
  for (const auto& [memory, passes] : {std::pair{"64M", 1u}, std::pair{"1500K", 2u}, std::pair{"300K", 3u}}) {
    const auto r = run_command(base + " -S " + memory + " " + in + " " + (dir / "out.csv").string());
    ASSERT_EQ(r.exit_code, 0) << memory << ": " << r.err;
    EXPECT_EQ(passes_of(r.err), passes) << memory << ": " << r.err;
    // What --dry-run predicts is what ran.
    const auto dry = run_command(base + " -S " + memory + " --dry-run " + in);
    EXPECT_NE(dry.out.find(std::to_string(passes) + (passes == 1 ? " pass " : " passes ") + "through disk"),
              std::string::npos)
        << memory << ": " << dry.out;
    const std::string out = read_file(dir / "out.csv");
    if (expected.empty()) {
      expected = out;
      ASSERT_EQ(expected.substr(0, header_line().size()), header_line());
      std::string indices;
      for (const std::string& record : csv_records(expected.substr(header_line().size()))) {
        indices += record.substr(0, record.find(',')) + "\n";
      }
      EXPECT_SAME_BYTES(indices, order.out);
    }
    EXPECT_SAME_BYTES(out, expected) << memory;
    const auto piped =
        run_command("cat " + in + " | " + base + " --format csv -S " + memory + " > " + (dir / "pipe.csv").string());
    ASSERT_EQ(piped.exit_code, 0) << memory << ": " << piped.err;
    EXPECT_SAME_BYTES(read_file(dir / "pipe.csv"), expected) << memory;
  }
}

// --header=N keeps N lines (N may be 2 or more); --header 0 and --header=0
// shuffle the first line in with the others; --header alone means 1 and may
// be followed by the input file.
TEST(CsvCli, HeaderOption) {
  TempDir dir;
  const std::string body = csv_body(1000);
  const std::string in = (dir / "in.csv").string();
  write_file(in, "title line\n" + header_line() + body);
  const auto two = run_command(kBinary + " --seed 1 --header=2 " + in);
  ASSERT_EQ(two.exit_code, 0) << two.err;
  EXPECT_EQ(two.out.substr(0, 11 + header_line().size()), "title line\n" + header_line());
  EXPECT_EQ(sorted(csv_records(two.out.substr(11 + header_line().size()))), sorted(csv_records(body)));

  write_file(dir / "plain.csv", header_line() + body);
  for (const std::string off : {"--header 0 ", "--header=0 "}) {
    const auto r = run_command(kBinary + " --seed 1 " + off + (dir / "plain.csv").string());
    ASSERT_EQ(r.exit_code, 0) << off << r.err;
    EXPECT_EQ(sorted(csv_records(r.out)), sorted(csv_records(header_line() + body))) << off;
    EXPECT_NE(r.out.substr(0, header_line().size()), header_line()) << off;  // seed 1 moves it
  }
  // Lines have no header by default; --header keeps one, also before the operands.
  write_file(dir / "lines.txt", "head\nb\nc\nd\ne\nf\ng\n");
  const auto flag_first = run_command(kBinary + " --seed 1 --header " + (dir / "lines.txt").string() + " " +
                                      (dir / "out.txt").string());
  ASSERT_EQ(flag_first.exit_code, 0) << flag_first.err;
  EXPECT_EQ(read_file(dir / "out.txt").substr(0, 5), "head\n");
  const auto flag_last = run_command(kBinary + " --seed 1 " + (dir / "lines.txt").string() + " --header");
  EXPECT_SAME_BYTES(flag_last.out, read_file(dir / "out.txt"));
  const auto bad = run_command(kBinary + " --header=x " + in);
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
  EXPECT_EQ(std::count(bad.err.begin(), bad.err.end(), '\n'), 1) << bad.err;
}

// TSV: a header kept on top; no quoting, so a quote is data and a newline
// always ends the record.
TEST(CsvCli, TsvKeepsItsHeaderAndCutsAtEveryNewline) {
  TempDir dir;
  const std::string body = "1\t\"open\n2\tclose\"\n3\tplain\n4\t\"q\"\n5\tx\n6\ty\n7\tz\n";
  write_file(dir / "in.tsv", "a\tb\n" + body);
  const auto r = run_command(kBinary + " --seed 2 " + (dir / "in.tsv").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(r.out.substr(0, 4), "a\tb\n");
  std::vector<std::string> out_lines, in_lines;
  std::string line;
  for (char c : r.out.substr(4)) {
    line += c;
    if (c == '\n') out_lines.push_back(line), line.clear();
  }
  for (char c : body) {
    line += c;
    if (c == '\n') in_lines.push_back(line), line.clear();
  }
  EXPECT_EQ(sorted(out_lines), sorted(in_lines));
  const auto forced = run_command("cat " + (dir / "in.tsv").string() + " | " + kBinary + " --seed 2 --format tsv");
  EXPECT_SAME_BYTES(forced.out, r.out);
}

// An unterminated quoted field: exit 1, one line naming the file and the
// problem, no output left behind.
TEST(CsvCli, UnterminatedQuotedFieldIsAnError) {
  TempDir dir;
  write_file(dir / "bad.csv", header_line() + csv_body(100) + "101,name,\"never closed,1.50\n102,x,y,2.00\n");
  const auto r = run_command(kBinary + " --seed 1 " + (dir / "bad.csv").string() + " " + (dir / "out.csv").string());
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_TRUE(std::regex_search(r.err, std::regex("^extshuffle: .*bad\\.csv.*unterminated quoted field.*\n$"))) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "out.csv"));
  // From standard input the message names standard input.
  const auto piped = run_command("cat " + (dir / "bad.csv").string() + " | " + kBinary + " --format csv");
  EXPECT_EQ(piped.exit_code, 1) << piped.err;
  EXPECT_TRUE(std::regex_search(piped.err, std::regex("^extshuffle: .*standard input.*unterminated.*\n$"))) << piped.err;
  EXPECT_EQ(piped.out, "");
  // The same file as lines is fine: quotes mean nothing there.
  const auto lines = run_command(kBinary + " --seed 1 --format lines " + (dir / "bad.csv").string());
  EXPECT_EQ(lines.exit_code, 0) << lines.err;
}

TEST(CsvCli, EmptyFileAndHeaderOnlyFile) {
  TempDir dir;
  write_file(dir / "empty.csv", "");
  const auto empty = run_command(kBinary + " --seed 1 " + (dir / "empty.csv").string() + " " + (dir / "out.csv").string());
  EXPECT_EQ(empty.exit_code, 0) << empty.err;
  EXPECT_SAME_BYTES(read_file(dir / "out.csv"), "");
  EXPECT_TRUE(std::filesystem::exists(dir / "out.csv"));
  write_file(dir / "header.csv", header_line());
  const auto header = run_command(kBinary + " --seed 1 " + (dir / "header.csv").string());
  EXPECT_EQ(header.exit_code, 0) << header.err;
  EXPECT_EQ(header.out, header_line());
  // A header without its newline gets one, as a last line does.
  write_file(dir / "cut.csv", "id,name");
  EXPECT_EQ(run_command(kBinary + " --seed 1 " + (dir / "cut.csv").string()).out, "id,name\n");
  // One record after the header, without its newline.
  write_file(dir / "one.csv", "id,name\n1,\"a\nb\"");
  EXPECT_EQ(run_command(kBinary + " --seed 1 " + (dir / "one.csv").string()).out, "id,name\n1,\"a\nb\"\n");
}

// CRLF files keep their CRs (header and records), also inside quoted fields.
TEST(CsvCli, CrlfIsKept) {
  TempDir dir;
  const std::string body = csv_body(3000, "\r\n");
  write_file(dir / "in.csv", "id,name,comment,amount\r\n" + body);
  const auto r = run_command(kBinary + " --seed 6 " + (dir / "in.csv").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.substr(0, 24), "id,name,comment,amount\r\n");
  EXPECT_EQ(sorted(csv_records(r.out.substr(24))), sorted(csv_records(body)));
}

// Bytes that are not CSV syntax pass through untouched: invalid UTF-8,
// a quote inside an unquoted field (a literal, as Python's csv reads it).
TEST(CsvCli, InvalidUtf8AndLiteralQuotesPassThrough) {
  TempDir dir;
  const std::string body = "1,\xff\xfe,\"\xc3(\n\xed\xa0\x80\"\n2,5\" screen,x\n3,caf\xc3\xa9,\"\"\"\"\n4,a\"b\"c,d\n";
  write_file(dir / "in.csv", "h1,h2,h3\n" + body);
  const auto r = run_command(kBinary + " --seed 5 " + (dir / "in.csv").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.size(), 9 + body.size());
  const std::vector<std::string> records = {"1,\xff\xfe,\"\xc3(\n\xed\xa0\x80\"\n", "2,5\" screen,x\n",
                                            "3,caf\xc3\xa9,\"\"\"\"\n", "4,a\"b\"c,d\n"};
  // Each record must appear whole: with four records, the output is the
  // header and a concatenation of them in some order.
  std::string rest = r.out.substr(9);
  std::vector<std::string> found;
  while (!rest.empty()) {
    const auto match = std::find_if(records.begin(), records.end(),
                                    [&](const std::string& record) { return rest.starts_with(record); });
    ASSERT_NE(match, records.end()) << "not a whole record at: " << rest;
    found.push_back(*match);
    rest.erase(0, match->size());
  }
  EXPECT_EQ(sorted(found), sorted(records));
}

// -n K: the header and the first K records of the full shuffle.
TEST(CsvCli, HeadCountKeepsTheHeader) {
  TempDir dir;
  const std::string in = (dir / "in.csv").string();
  write_file(in, header_line() + csv_body(20000));
  const auto full = run_command(kBinary + kKnobs + "-q --seed 4 -S 700K " + in);
  ASSERT_EQ(full.exit_code, 0) << full.err;
  const std::vector<std::string> records = csv_records(full.out);
  for (std::size_t k : {std::size_t{0}, std::size_t{3}, std::size_t{19999}, std::size_t{20000}, std::size_t{50000}}) {
    const auto head = run_command(kBinary + kKnobs + "-q --seed 4 -S 700K -n " + std::to_string(k) + " " + in);
    ASSERT_EQ(head.exit_code, 0) << head.err;
    std::string expected;
    for (std::size_t r = 0; r < std::min(k + 1, records.size()); ++r) expected += records[r];
    EXPECT_SAME_BYTES(head.out, expected) << "k " << k;
  }
}

// --skip-empty drops blank lines between records, never a quoted field that
// holds blank lines.
TEST(CsvCli, SkipEmptyKeepsQuotedBlankLines) {
  TempDir dir;
  const std::string body = "1,a\n\n2,\"\n\n\"\n  \n3,c\n";
  write_file(dir / "in.csv", "h,v\n" + body);
  const auto r = run_command(kBinary + " --seed 1 --skip-empty " + (dir / "in.csv").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(r.out.substr(0, 4), "h,v\n");
  EXPECT_EQ(sorted(csv_records(r.out.substr(4))), sorted(std::vector<std::string>{"1,a\n", "2,\"\n\n\"\n", "3,c\n"}));
}

}  // namespace
}  // namespace extshuffle::testing::csv_cli_test
