// The RESULT line of --stats is read from one list of fields
// (tools/cli/result_fields.hpp), which Python's dict and extshuffle-mpi's
// lines read too (tests/python/test_shuffle.py, tests/mpi/mpi_commit_test.cpp):
// each member of RunStats under its own name, each name once, and the
// program's line holding exactly the listed fields, then the seed.
// Deterministic.
#include <gtest/gtest.h>

#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli/result_fields.hpp"
#include "cli/run_report.hpp"
#include "support/command.hpp"

namespace extshuffle::testing::result_fields_test {
namespace {

// The keys of the first line of `text` that starts with "RESULT ", in order.
std::vector<std::string> result_keys(const std::string& text) {
  std::istringstream lines(text);
  std::vector<std::string> keys;
  for (std::string line; std::getline(lines, line);) {
    if (!line.starts_with("RESULT ")) continue;
    std::istringstream fields(line.substr(7));
    for (std::string field; fields >> field;) keys.push_back(field.substr(0, field.find('=')));
    break;
  }
  return keys;
}

TEST(ResultFields, EachMemberIsPrintedUnderItsOwnName) {
  // Every member a value of its own, in RunStats' order of declaration.
  const RunStats stats{1, 2, 3, 4, 5.25, 6, 7, 8, 9, 10.5, 11.125, 12.25, 13.5};
  EXPECT_EQ(cli::result_line(stats, 14),
            "RESULT records=1 bytes=2 levels=3 passes=4 seconds=5.250 bytes_read=6 bytes_written=7 "
            "peak_rss_bytes=8 seconds_reading=10.500 seconds_shuffling=11.125 seconds_scattering=12.250 "
            "seconds_writing=13.500 huge_page_bytes=9 seed=14");
}

TEST(ResultFields, EachNameIsListedOnce) {
  std::set<std::string> names;
  for (const auto& field : cli::kResultFields) EXPECT_TRUE(names.insert(field.name).second) << field.name;
  EXPECT_FALSE(names.contains("seed"));  // the run's, not a measured fact: result_line adds it
}

TEST(ResultFields, TheProgramPrintsTheListedFieldsThenTheSeed) {
  TempDir dir;
  write_file(dir / "in.txt", "a\nb\nc\n");
  const CommandResult r = run_command(extshuffle_binary() + " " + (dir / "in.txt").string() + " " +
                                      (dir / "out.txt").string() + " --seed 9 --stats");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> listed;
  for (const auto& field : cli::kResultFields) listed.push_back(field.name);
  listed.push_back("seed");
  EXPECT_EQ(result_keys(r.err), listed) << r.err;
  EXPECT_NE(r.err.find(" records=3 "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(" seed=9\n"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace extshuffle::testing::result_fields_test
