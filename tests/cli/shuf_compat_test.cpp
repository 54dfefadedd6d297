// GNU coreutils' own shuf tests (tests/shuf/shuf.sh), check by check: each
// test below quotes the shuf.sh lines it mirrors. Where extshuffle differs on
// purpose the test says so and checks what extshuffle does instead:
//  - usage errors exit 2 (as sort and grep do, docs/cli.md), where shuf
//    exits 1; shuf.sh's "|| test $? -ne 1" checks therefore expect 2 here;
//  - `ulimit -v 8192` is below what the binary needs to load its libraries
//    (STXXL, OpenMP): the memory check runs at 256 MiB against -S 1G;
//  - `chmod 0` does not stop root from reading: as root the -n 0 check runs
//    on a missing file, as shuf.sh skips it.
// Probabilistic checks state their false-failure odds.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "support/command.hpp"
#include "support/text_records.hpp"

namespace extshuffle::testing::shuf_compat_test {
namespace {

const std::string kShuf = extshuffle_binary();

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines = split_records(text);
  for (std::string& line : lines) {
    if (!line.empty() && line.back() == '\n') line.pop_back();
  }
  return lines;
}

std::string sorted_numerically(const std::string& text) {
  std::vector<std::uint64_t> numbers;
  for (const std::string& line : lines_of(text)) numbers.push_back(std::stoull(line));
  std::sort(numbers.begin(), numbers.end());
  std::string out;
  for (const std::uint64_t x : numbers) out += std::to_string(x) + "\n";
  return out;
}

std::set<std::string> distinct(const std::string& text) {
  const auto lines = lines_of(text);
  return {lines.begin(), lines.end()};
}

std::string seq(int n) {
  std::string out;
  for (int i = 1; i <= n; ++i) out += std::to_string(i) + "\n";
  return out;
}

bool have_tool(const std::string& name) { return run_command("command -v " + name).exit_code == 0; }

// strace -o /dev/null -e inject=getrandom:error=ENOSYS shuf -i 1-9
// ret=$?; test $ret = 0 || test $ret = 1 || fail=1
TEST(ShufCompat, UnsupportedGetrandomEndsWithZeroOrOne) {
  if (!have_tool("strace") || run_command("strace -o /dev/null true").exit_code != 0) {
    GTEST_SKIP() << "strace cannot trace here (not installed, or ptrace not permitted)";
  }
  // LeakSanitizer cannot run under ptrace: the traced binary leaves it out.
  const std::string environment = binary_is_sanitized() ? "ASAN_OPTIONS=\"$ASAN_OPTIONS:detect_leaks=0\" " : "";
  const auto r =
      run_command(environment + "strace -o /dev/null -e inject=getrandom:error=ENOSYS " + kShuf + " -i 1-9");
  EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.exit_code << r.err;
}

// shuf_rand() { setarch -R shuf -i 1-$UINTMAX_MAX -n 1; }
// shuf_rand >out1 && shuf_rand >out2 && compare out1 out2 && fail=1
// False failure: the two seeds and then the two numbers collide, < 2^-63.
TEST(ShufCompat, RandomSeedsDoNotDependOnAddressLayout) {
  const std::string setarch = run_command("setarch -R true").exit_code == 0 ? "setarch -R " : "";
  const auto one = run_command(setarch + kShuf + " -i 1-18446744073709551615 -n 1");
  const auto two = run_command(setarch + kShuf + " -i 1-18446744073709551615 -n 1");
  ASSERT_EQ(one.exit_code, 0) << one.err;
  ASSERT_EQ(two.exit_code, 0) << two.err;
  EXPECT_EQ(lines_of(one.out).size(), 1u);
  EXPECT_DIFFERENT_BYTES(one.out, two.out);
}

// seq 100 > in; shuf in >out
// compare in out > /dev/null && { fail=1; echo "not random?" 1>&2; }   (odds 1 in 100!)
// sort -n out > out1; compare in out1 || { fail=1; echo "not a permutation" 1>&2; }
TEST(ShufCompat, ShufflesAFileIntoAPermutation) {
  TempDir dir;
  write_file(dir / "in", seq(100));
  const auto r = run_command(kShuf + " " + (dir / "in").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_DIFFERENT_BYTES(r.out, seq(100));
  EXPECT_SAME_BYTES(sorted_numerically(r.out), seq(100));
}

// shuf -i 1-100 > out || fail=1
// compare in out > /dev/null && ...not random...; sort -n out > out1; compare in out1 || ...
TEST(ShufCompat, InputRangeIsAPermutation) {
  const auto r = run_command(kShuf + " -i 1-100");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_DIFFERENT_BYTES(r.out, seq(100));  // odds 1 in 100!
  EXPECT_SAME_BYTES(sorted_numerically(r.out), seq(100));
}

// shuf -r -n 0 in <&- >out || fail=1; compare /dev/null out || fail=1
TEST(ShufCompat, RepeatWithZeroCountAndClosedStdinOutputsNothing) {
  TempDir dir;
  write_file(dir / "in", seq(100));
  const auto r = run_command(kShuf + " -r -n 0 " + (dir / "in").string() + " <&-");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "");
}

// t=$(shuf -e a b c d e | sort | fmt); test "$t" = 'a b c d e' || ...not a permutation...
TEST(ShufCompat, EchoIsAPermutationOfItsArguments) {
  const auto r = run_command(kShuf + " -e a b c d e | sort | fmt");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "a b c d e\n");
}

// shuf -er; test $? -eq 1 || fail=1      (coreutils-8.22 dumped core)
TEST(ShufCompat, RepeatWithNoEchoItemsFailsWithOne) {
  const auto r = run_command(kShuf + " -er");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "extshuffle: -e: no items to repeat\n");
}

// shuf -i0-0 1; test $? -eq 1 || fail=1  (8.22 and 8.23 dumped core)
// A usage error here: exit 2, see the top of the file.
TEST(ShufCompat, InputRangeWithAnOperandIsAUsageError) {
  const auto r = run_command(kShuf + " -i0-0 1");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "extshuffle: command line: extra operand '1' with -i\n");
}

// "seq 1860" produces 8193 (8K + 1) bytes of output.
// seq 1860 | shuf > /dev/null || fail=1  (looped forever before 6.3)
TEST(ShufCompat, InputOfEightKiBAndOneByteIsRead) {
  const auto r = run_command("seq 1860 | " + kShuf);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_SAME_BYTES(sorted_numerically(r.out), seq(1860));
}

// shuf --zero-terminated -i 1-1 > out; printf '1\0' > exp; cmp out exp || ...missing NUL terminator?...
TEST(ShufCompat, ZeroTerminatedEndsRangeAndEchoItemsWithNul) {
  const auto range = run_command(kShuf + " --zero-terminated -i 1-1");
  ASSERT_EQ(range.exit_code, 0) << range.err;
  EXPECT_SAME_BYTES(range.out, std::string("1\0", 2));
  const auto echo = run_command(kShuf + " -z -e a b --seed 1 | sort -z | od -An -c");
  ASSERT_EQ(echo.exit_code, 0) << echo.err;
  EXPECT_EQ(echo.out, "   a  \\0   b  \\0\n");
}

// { ulimit -v 8192 && returns_ 1 shuf -i1-1000000 || fail=1; }
TEST(ShufCompat, ExhaustedMemoryExitsWithOne) {
  if (binary_is_sanitized()) {
    GTEST_SKIP() << "AddressSanitizer reserves terabytes of address space: no ulimit -v lets it start";
  }
  const auto r = run_command("ulimit -v 262144 && " + kShuf + " -S 1G -i1-30000000");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.err, "extshuffle: out of memory: lower --memory or raise the process's memory limit\n");
}

// timeout 10 shuf -i1-$SIZE_MAX -n2 >/dev/null || { fail=1; echo "couldn't get a small subset" >&2; }
// Bounded here in CPU seconds (ulimit -t), which a busy machine does not
// stretch as it does the wall clock.
TEST(ShufCompat, SmallSubsetOfTheWholeSixtyFourBitRangeIsQuick) {
  const auto r = run_command("ulimit -t 10 && " + kShuf + " -i1-18446744073709551615 -n2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto lines = lines_of(r.out);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_DIFFERENT_BYTES(lines[0], lines[1]);
  for (const std::string& line : lines) EXPECT_GE(std::stoull(line), 1u);
}

// touch unreadable; chmod 0 unreadable
// if ! test -r unreadable; then
//   shuf -n0 unreadable || fail=1
//   { shuf -n1 unreadable || test $? -ne 1; } && fail=1
// fi
TEST(ShufCompat, ZeroCountOpensNoInput) {
  TempDir dir;
  std::vector<std::string> inputs{(dir / "missing").string()};
  if (::geteuid() != 0) {
    write_file(dir / "unreadable", "x\n");
    run_command("chmod 0 " + (dir / "unreadable").string());
    inputs.push_back((dir / "unreadable").string());
  }
  for (const std::string& input : inputs) {
    const auto none = run_command(kShuf + " -n0 " + input);
    EXPECT_EQ(none.exit_code, 0) << input << ": " << none.err;
    EXPECT_EQ(none.out, "");
    const auto one = run_command(kShuf + " -n1 " + input);
    EXPECT_EQ(one.exit_code, 1) << input;
    EXPECT_NE(one.err.find("cannot open input"), std::string::npos) << one.err;
  }
}

// shuf -n10 -i0-9 -n3 -n20 > exp; c=$(wc -l < exp); test "$c" -eq 3 || ...Multiple -n failed...
TEST(ShufCompat, SeveralHeadCountsTakeTheSmallest) {
  const auto r = run_command(kShuf + " -n10 -i0-9 -n3 -n20");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(lines_of(r.out).size(), 3u);
}

// : | { shuf -i0-9 -e A B || test $? -ne 1; } && ...erroneous -e and -i usage...
TEST(ShufCompat, EchoAndInputRangeTogetherAreAnError) {
  const auto r = run_command(": | " + kShuf + " -i0-9 -e A B");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "extshuffle: command line: -e and -i cannot be combined\n");
}

// : | { shuf -nA || test $? -ne 1; } && ...erroneous -n usage...
TEST(ShufCompat, InvalidHeadCountIsAnError) {
  const auto r = run_command(": | " + kShuf + " -nA");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "extshuffle: invalid --head-count 'A': expected a whole number\n");
}

// { shuf -i0-9 -n10 -i8-90 || test $? -ne 1; } && ...multiple -i usage...
TEST(ShufCompat, SeveralInputRangesAreAnError) {
  const auto r = run_command(kShuf + " -i0-9 -n10 -i8-90");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "extshuffle: --input-range: given 2 times, allowed once\n");
}

// for ARG in '1' 'A' '1-' '1-A'; do { shuf -i$ARG || test $? -ne 1; } && ...erroneous -i$ARG usage...
TEST(ShufCompat, InvalidInputRangesAreErrors) {
  for (const std::string arg : {"1", "A", "1-", "1-A"}) {
    const auto r = run_command(kShuf + " -i" + arg);
    EXPECT_EQ(r.exit_code, 2) << arg;
    EXPECT_EQ(r.err, "extshuffle: invalid input range '" + arg + "': expected LO-HI with LO <= HI + 1\n");
  }
}

// { shuf -i0-9 -o A -o B || test $? -ne 1; } && ...erroneous multiple -o usage...
TEST(ShufCompat, SeveralOutputsOfOneRangeAreAnError) {
  TempDir dir;
  const auto r = run_command("cd " + dir.path().string() + " && " + kShuf + " -i0-9 -o A -o B");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "extshuffle: command line: -e and -i write one output\n");
  EXPECT_FALSE(std::filesystem::exists(dir / "A"));
}

// { shuf -i0-9 --random-source A --random-source B || test $? -ne 1; } && ...multiple --random-source...
TEST(ShufCompat, SeveralRandomSourcesAreAnError) {
  const auto r = run_command(kShuf + " -i0-9 --random-source A --random-source B");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "extshuffle: --random-source: given 2 times, allowed once\n");
}

// shuf --rep -i 0-10 | head -n 1000 > exp; c=$(wc -l < exp); test "$c" -eq 1000 || ...
TEST(ShufCompat, RepeatWithoutCountIsEndless) {
  const auto r = run_command(kShuf + " --rep -i 0-10 | head -n 1000; echo \"status ${PIPESTATUS[0]}\" >&2");
  EXPECT_EQ(lines_of(r.out).size(), 1000u);
  // The stream ends on the broken pipe as if killed by SIGPIPE, quietly.
  EXPECT_EQ(r.err, "status 141\n");
}

// shuf --rep -i0-9 -n1000 > exp; c=$(wc -l < exp); test "$c" -eq 1000 || ...
// c=$(sort -nu exp | paste -s -d ' '); test "$c" = "0 1 2 3 4 5 6 7 8 9" || ...
// Odds that a value is missing from 1000 fair draws: 10 x 0.9^1000 < 1e-44.
TEST(ShufCompat, RepeatWithCountOutputsMoreThanTheRangeAndEveryValue) {
  const auto r = run_command(kShuf + " --rep -i0-9 -n1000");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(lines_of(r.out).size(), 1000u);
  EXPECT_EQ(distinct(r.out), (std::set<std::string>{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"}));
}

// shuf --rep -i222-233 -n2000 > exp; c=$(sort -nu exp | paste -s -d ' ')
// test "$c" = "222 223 ... 233" || ...bad output with non-zero low...   (odds 12 x (11/12)^2000 < 1e-74)
TEST(ShufCompat, RepeatWithNonZeroLowGivesEveryValue) {
  const auto r = run_command(kShuf + " --rep -i222-233 -n2000 | sort -nu | paste -s -d \" \"");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "222 223 224 225 226 227 228 229 230 231 232 233\n");
}

// shuf --rep -i0-9 -n0 > exp; test \! -s exp || ...-n0 produced bad output...
TEST(ShufCompat, RepeatRangeWithZeroCountOutputsNothing) {
  const auto r = run_command(kShuf + " --rep -i0-9 -n0");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "");
}

// shuf --rep -e A B C D | head -n 1000 > exp; c=$(wc -l < exp); test "$c" -eq 1000 || ...
TEST(ShufCompat, RepeatEchoWithoutCountIsEndless) {
  const auto r = run_command(kShuf + " --rep -e A B C D | head -n 1000");
  EXPECT_EQ(lines_of(r.out).size(), 1000u);
  EXPECT_EQ(distinct(r.out), (std::set<std::string>{"A", "B", "C", "D"}));  // odds 4 x 0.75^1000
}

// printf "A\nB\nC\nD\nE\n" | shuf --rep | head -n 1000 > exp; c=$(wc -l < exp); test "$c" -eq 1000 || ...
TEST(ShufCompat, RepeatStandardInputWithoutCountIsEndless) {
  const auto r = run_command("printf \"A\\nB\\nC\\nD\\nE\\n\" | " + kShuf + " --rep | head -n 1000");
  EXPECT_EQ(lines_of(r.out).size(), 1000u);
}

// printf "A\nB\nC\nD\nE\n" | shuf --rep -n2000 > exp; c=$(wc -l < exp); test "$c" -eq 2000 || ...
// c=$(sort -u exp | paste -s -d ' '); test "$c" = "A B C D E" || ...   (odds 5 x 0.8^2000 < 1e-192)
TEST(ShufCompat, RepeatStandardInputWithCountGivesEveryValue) {
  const auto r = run_command("printf \"A\\nB\\nC\\nD\\nE\\n\" | " + kShuf + " --rep -n2000");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(lines_of(r.out).size(), 2000u);
  EXPECT_EQ(distinct(r.out), (std::set<std::string>{"A", "B", "C", "D", "E"}));
}

// printf "A\nB\nC\nD\nE\n" | shuf --rep -n0 > exp; test \! -s exp || ...
TEST(ShufCompat, RepeatStandardInputWithZeroCountOutputsNothing) {
  const auto r = run_command("printf \"A\\nB\\nC\\nD\\nE\\n\" | " + kShuf + " --rep -n0");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "");
}

// shuf /dev/null <&- >out || fail=1; compare /dev/null out || fail=1   (coreutils bug#25029)
TEST(ShufCompat, EmptyInputWithStandardInputClosed) {
  const auto r = run_command(kShuf + " /dev/null <&-");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "");
}

}  // namespace
}  // namespace extshuffle::testing::shuf_compat_test
