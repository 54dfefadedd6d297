// Record indexes and the one commit (docs/cli.md "Record indexes"): the
// indexes --index writes beside the pieces are published with them, so a
// run that fails (the disk full while the pieces and indexes are written)
// leaves the older dataset whole, its indexes included, and no partial
// index under any name; --index-only of an input that changes while it is
// read writes nothing. Faults come from the shim (fault_shim.c); the input
// changes while the shim holds the run's read, on an event, not a clock.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "reliability_support.hpp"

namespace extshuffle::testing::index_commit_test {
namespace {

namespace fs = std::filesystem;

std::string lines(int count, int width) {
  std::string text;
  for (int k = 0; k < count; ++k) {
    std::string line = std::to_string(k);
    text += std::string(width - line.size(), '0') + line + "\n";
  }
  return text;
}

std::map<std::string, std::string> contents(const fs::path& dir) {
  std::map<std::string, std::string> files;
  for (const std::string& name : entries(dir)) files[name] = read_file(dir / name);
  return files;
}

TEST(IndexCommit, AFailedRunLeavesTheOlderPiecesAndIndexesWhole) {
  Workspace w;
  const std::string input = (w.in_dir / "in.txt").string();
  write_file(input, lines(200000, 15));
  const std::string pattern = (w.out_dir / "p-{shard}.txt").string();
  const Outcome first = run_binary({input, "-o", pattern, "--shards", "3", "--seed", "1", "--index"});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const auto before = contents(w.out_dir);
  ASSERT_EQ(before.size(), 6u);  // three pieces, three indexes
  // The disk fills once most of the new pieces are written.
  Child child({input, "-o", pattern, "--shards", "3", "--seed", "2", "--index", "-T", w.tmp_dir.string()},
              fault_environment("enospc", w.out_dir.string(), 2500000, w), w.capture_dir);
  EXPECT_EQ(child.wait(), 1);
  EXPECT_TRUE(fs::exists(w.marker())) << "the fault did not fire";
  EXPECT_TRUE(is_one_line_error(child.err(), "No space left on device")) << child.err();
  EXPECT_EQ(contents(w.out_dir), before);  // nothing new, nothing half-replaced, no temporary left
}

TEST(IndexCommit, AnInputChangedWhileIndexedGetsNoIndex) {
  Workspace w;
  const std::string input = (w.in_dir / "in.txt").string();
  write_file(input, lines(1000000, 15));  // 16 MB: the counting pass reads it in 2 MiB pieces
  Child child({"--index-only", input}, fault_environment("pause-read", input, 6 << 20, w), w.capture_dir);
  ASSERT_TRUE(wait_for_file(w.marker())) << "the read did not pause";
  std::ofstream(input, std::ios::app) << "appended while indexed\n";
  write_file(w.release(), "");
  EXPECT_EQ(child.wait(), 1);
  EXPECT_TRUE(is_one_line_error(child.err(), "changed")) << child.err();
  EXPECT_EQ(entries(w.in_dir), std::vector<std::string>{"in.txt"});
}

}  // namespace
}  // namespace extshuffle::testing::index_commit_test
