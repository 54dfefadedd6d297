// No file is ever created for STXXL's logs (docs/reliability.md, "Checked
// before trusted"). STXXL's logger opens its two log files with
// std::ofstream when its first file is made; the tool named them /dev/null,
// which every run opened with O_CREAT | O_TRUNC, so a container without the
// node got a regular file there. Their names are now empty, which cannot be
// opened at all.
#include <gtest/gtest.h>

#include <sstream>

#include "reliability_support.hpp"

namespace extshuffle::testing::stxxl_logs_test {
namespace {

bool strace_works() {
  return run_command("command -v strace").exit_code == 0 && run_command("strace -o /dev/null true").exit_code == 0;
}

// The paths a traced run opened with O_CREAT (not O_TMPFILE: an unnamed
// file creates no name). A name relative to a directory's descriptor (the
// commit's lock file, made through the destination's descriptor) is taken
// from the descriptor's path, which strace -y shows: openat(3</dir>, "name", ...).
std::vector<std::string> created_paths(const std::string& trace) {
  std::vector<std::string> paths;
  std::istringstream lines(trace);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.find("O_CREAT") == std::string::npos || line.find("O_TMPFILE") != std::string::npos) continue;
    const auto open_quote = line.find('"');
    const auto close_quote = line.find('"', open_quote + 1);
    if (open_quote == std::string::npos || close_quote == std::string::npos) continue;
    std::string path = line.substr(open_quote + 1, close_quote - open_quote - 1);
    const auto at = line.find("openat(");
    const auto directory_open = line.find('<', at), directory_close = line.find('>', directory_open);
    const bool by_descriptor = at != std::string::npos && line.compare(at + 7, 8, "AT_FDCWD") != 0;
    if (!path.empty() && !path.starts_with("/") && by_descriptor && directory_close < open_quote) {
      path = line.substr(directory_open + 1, directory_close - directory_open - 1) + "/" + path;
    }
    paths.push_back(path);
  }
  return paths;
}

// The reproduction: every run opened /dev/null with O_CREAT | O_TRUNC.
// Traced through disk (STXXL's scratch and input files) and in RAM: the
// only names the run creates lie in its own directories.
TEST(StxxlLogs, NoRunCreatesAFileOutsideItsDirectories) {
  if (!strace_works()) GTEST_SKIP() << "strace cannot trace here (not installed, or ptrace not permitted)";
  Workspace w;
  write_file(w.input(), numbered_u64(200000));
  // LeakSanitizer cannot run under ptrace: the traced binary leaves it out.
  const std::string environment = binary_is_sanitized() ? "ASAN_OPTIONS=\"$ASAN_OPTIONS:detect_leaks=0\" " : "";
  for (const std::string memory : {"512K", "64M"}) {
    SCOPED_TRACE("-S " + memory);
    const std::string trace = (w.capture_dir / "trace").string();
    const auto r = run_command(environment + "strace -f -qq -y -e trace=open,openat,creat -o " + trace + " " + kBinary +
                               " -q --record-size 8 --leaf-records 65536 --fanout 4 -S " + memory + " -T " +
                               w.tmp_dir.string() + " " + w.input() + " -o " + w.output());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::string opened = read_file(trace);
    ASSERT_NE(opened.find(w.input()), std::string::npos) << "the trace holds no open of the input";
    for (const std::string& path : created_paths(opened)) {
      EXPECT_NE(path, "/dev/null");
      EXPECT_TRUE(path.empty() || path.rfind(w.root.path().string(), 0) == 0 ||
                  path.rfind(std::filesystem::canonical(w.root.path()).string(), 0) == 0)
          << "created outside the run's directories: " << path;
    }
  }
}

// The container of the report: a mount namespace whose /dev is an empty
// tmpfs. A run made /dev/null a regular file holding STXXL's log (51 KB);
// now /dev stays empty. Needs root (unshare -m, mount): skipped otherwise.
TEST(StxxlLogs, ADevWithoutNullStaysEmpty) {
  if (run_command("unshare -m sh -c 'mount -t tmpfs none /dev'").exit_code != 0) {
    GTEST_SKIP() << "no mount namespace here (unshare -m and mount need root)";
  }
  Workspace w;
  write_file(w.input(), numbered_u64(200000));
  // Inside bash -c '...' (run_command): sh -c "..." with its own $ escaped.
  const std::string environment = binary_is_sanitized() ? "ASAN_OPTIONS=$ASAN_OPTIONS " : "";
  const std::string listing = (w.capture_dir / "dev").string();
  const auto r = run_command("unshare -m sh -c \"mount -t tmpfs none /dev && " + environment + kBinary +
                             " -q --record-size 8 --leaf-records 65536 --fanout 4 -S 512K -T " + w.tmp_dir.string() +
                             " " + w.input() + " -o " + w.output() + " 2>" + (w.capture_dir / "err").string() +
                             "; status=\\$?; ls -A /dev >" + listing + "; exit \\$status\"");
  ASSERT_EQ(r.exit_code, 0) << read_file(w.capture_dir / "err");
  EXPECT_TRUE(is_permutation_of_iota(u64_indices(read_file(w.output()))));
  EXPECT_SAME_BYTES(read_file(listing), "") << "the run created files in /dev";
}

}  // namespace
}  // namespace extshuffle::testing::stxxl_logs_test
