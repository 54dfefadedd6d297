// Every error path the CLI tests know, in one table: each prints exactly one
// line "extshuffle: <what>: <why>" on stderr with no text of CLI11, STXXL or
// the standard library, exits 2 (usage) or 1 (runtime), leaves the input as
// it was and creates or changes no output file. Deterministic: the
// false-failure rate is 0. EXTSHUFFLE_BINARY is set by CMake.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <regex>
#include <sstream>
#include <string>

#include "support/command.hpp"

namespace extshuffle::testing::error_messages_test {
namespace {

const std::string kBinary = extshuffle_binary();

struct BadRun {
  const char* arguments;  // IN, OUT, DIR, CSV, GZ are replaced by paths
  int exit_code;
};

// Usage errors (2): the command line; runtime errors (1): the files.
constexpr BadRun kBadRuns[] = {
    {"-n A IN", 2},
    {"-n -3 IN", 2},
    {"--head-count IN", 2},
    {"--bogus IN", 2},
    {"-S", 2},
    {"--seed", 2},
    {"--seed 1 --seed 2 IN", 2},
    {"--seed x IN", 2},
    {"--threads x IN", 2},
    {"--threads -1 IN", 2},
    {"--format bogus IN", 2},
    {"--device gpu IN", 2},
    {"--record-size 0 IN", 2},
    {"--record-size 8x IN", 2},
    {"--memory 10Q IN", 2},
    {"--memory 0 IN", 2},
    {"--memory 1000T IN", 2},
    {"--memory 101% IN", 2},
    {"--header=x IN", 2},
    {"--fanout 1 IN", 2},
    {"-i 5-3", 2},
    {"-i abc", 2},
    {"IN OUT extra", 2},
    {"-o a -o b -o c IN", 2},
    {"--record-size 7 IN OUT", 1},
    {"--record-size 8 missing.bin OUT", 1},
    {"--record-size 8 DIR OUT", 2},                 // OUT lies in DIR, an input directory: refused by the plan
    {"--record-size 8 IN DIR/missing/out.bin", 2},  // refused by the plan before any work
    {"--record-size 8 -T DIR/missing IN OUT", 1},
    {"CSV OUT --format csv", 1},
    {"GZ OUT", 1},
    {"-r --verify IN", 2},
    {"-r --dry-run IN", 2},
    {"--random-source IN", 2},
    {"-i 0-18446744073709551615", 2},
    {"--format tfrecord -z IN", 2},
    {"--format tfrecord IN OUT", 1},
    {"-r --record-size 8 missing.bin OUT", 1},
    {"-er", 1},
    {"--index-only GZ", 2},
    {"--index-only IN -n 3", 2},
    {"--record-size 8 IN --index", 2},
    {"--record-size 8 IN -o DIR/o.bin.zst --index", 2},
};

// The arguments with each placeholder word (a whole word, or the start of a
// path "DIR/...") replaced by its path, in one pass: a path may itself hold
// a placeholder's letters (mkdtemp's suffix is random), which a search and
// replace would find again.
std::string substitute(const std::string& arguments, const std::map<std::string, std::string>& paths) {
  std::istringstream words(arguments);
  std::string result;
  for (std::string word; words >> word;) {
    const std::size_t slash = word.find('/');
    const auto path = paths.find(word.substr(0, slash));
    if (path != paths.end()) word = path->second + (slash == std::string::npos ? "" : word.substr(slash));
    result += (result.empty() ? "" : " ") + word;
  }
  return result;
}

TEST(ErrorMessages, EveryErrorIsOneLineOfOurOwn) {
  // Paths that hold placeholders' letters stay as they are.
  ASSERT_EQ(substitute("-T DIR/x IN --memory 0", {{"DIR", "/t/OUT"}, {"IN", "/t/aINb"}, {"OUT", "o"}}),
            "-T /t/OUT/x /t/aINb --memory 0");
  TempDir dir;
  const std::string in = (dir / "in.bin").string(), out = (dir / "out.bin").string();
  const std::string csv = (dir / "bad.csv").string(), gz = (dir / "bad.gz").string();
  std::string records(800, 'r');  // 100 records of 8 bytes
  write_file(in, records);
  write_file(csv, "a,b\n\"unterminated,1\n");
  write_file(gz, "not gzip data");
  const std::regex ours("^extshuffle: [^\n]+: [^\n]+\n$");
  const char* foreign[] = {"stxxl", "STXXL", "iostream error", "CLI11", "basic_string", "std::", "At Most",
                           "Could not convert", "terminate called", "not in {", "required but", "what():"};
  for (const BadRun& run : kBadRuns) {
    const std::string arguments =
        substitute(run.arguments, {{"DIR", dir.path().string()}, {"IN", in}, {"OUT", out}, {"CSV", csv}, {"GZ", gz}});
    const CommandResult r = run_command(kBinary + " " + arguments + " --seed 1");
    SCOPED_TRACE(std::string("extshuffle ") + run.arguments + ": " + r.err);
    EXPECT_EQ(r.exit_code, run.exit_code);
    EXPECT_TRUE(std::regex_match(r.err, ours)) << "not one line of the form extshuffle: <what>: <why>";
    for (const char* fragment : foreign) EXPECT_EQ(r.err.find(fragment), std::string::npos) << fragment;
    EXPECT_SAME_BYTES(read_file(in), records) << "input changed";
    EXPECT_FALSE(std::filesystem::exists(out)) << "output created";
    EXPECT_EQ(r.out, "");
  }
  // Only the files written above remain: no temporary output, no scratch.
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()), std::filesystem::directory_iterator()), 3);
}

}  // namespace
}  // namespace extshuffle::testing::error_messages_test
