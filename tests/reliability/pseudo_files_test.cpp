// The kernel's pseudo files (docs/cli.md "Inputs", docs/reliability.md):
// their size is not their length (/proc/sys/* and /proc/cpuinfo say 0
// bytes, a /sys attribute 4096), so a run that trusted it wrote an empty
// output with exit 0, leaked STXXL's text for /proc/cpuinfo and said
// "Input/output error" of a readable /sys file. They are read as a pipe is,
// spooled: the output is the file's records. An output on such a file
// system is refused with the reason, not with "No such file or directory".
// An error STXXL raises (its size() of a file whose lseek fails) reaches the
// user in the one-line form, never as STXXL's text.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "reliability_support.hpp"

namespace extshuffle::testing::pseudo_files_test {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> sorted_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  for (std::size_t end; (end = text.find('\n', start)) != std::string::npos; start = end + 1) {
    lines.push_back(text.substr(start, end - start));
  }
  if (start < text.size()) lines.push_back(text.substr(start));
  std::sort(lines.begin(), lines.end());
  return lines;
}

// A pseudo file whose bytes do not change between reads, shuffled: its lines.
void expect_shuffled_whole(const std::string& path) {
  SCOPED_TRACE(path);
  const std::string content = read_file(path);
  ASSERT_FALSE(content.empty());
  const auto r = run_binary({path, "--seed", "1"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(sorted_lines(r.out), sorted_lines(content));
}

TEST(PseudoFiles, ProcFilesAreReadAsStreams) {
  if (!fs::exists("/proc/version")) GTEST_SKIP() << "no /proc";
  // As shuf: one line (it printed none, exit 0).
  const auto uuid = run_binary({"/proc/sys/kernel/random/uuid"});
  EXPECT_EQ(uuid.exit_code, 0) << uuid.err;
  EXPECT_EQ(uuid.out.size(), 37u) << uuid.out;
  EXPECT_EQ(std::count(uuid.out.begin(), uuid.out.end(), '\n'), 1);
  expect_shuffled_whole("/proc/version");
  expect_shuffled_whole("/proc/sys/fs/file-max");
  // Into a file, with -o (it was written empty).
  Workspace w;
  const auto out = run_binary({"/proc/sys/fs/file-max", "-o", w.output(), "--seed", "1"});
  EXPECT_EQ(out.exit_code, 0) << out.err;
  EXPECT_SAME_BYTES(read_file(w.output()), read_file("/proc/sys/fs/file-max"));
  // /proc/cpuinfo: its lines (a clock's "cpu MHz" may change between reads);
  // it ended with STXXL's text about lseek.
  const auto cpuinfo = run_binary({"/proc/cpuinfo", "--seed", "4"});
  EXPECT_EQ(cpuinfo.exit_code, 0) << cpuinfo.err;
  EXPECT_EQ(cpuinfo.err, "");
  const auto steady = [](const std::string& text) {
    std::vector<std::string> kept;
    for (const std::string& line : sorted_lines(text)) {
      if (line.rfind("cpu MHz", 0) != 0) kept.push_back(line);
    }
    return kept;
  };
  EXPECT_EQ(steady(cpuinfo.out), steady(read_file("/proc/cpuinfo")));
}

TEST(PseudoFiles, SysFilesAreReadWithoutAFalseError) {
  const std::vector<std::string> candidates = {"/sys/devices/system/cpu/online", "/sys/devices/system/cpu/possible",
                                               "/sys/kernel/mm/transparent_hugepage/enabled", "/sys/power/state"};
  int tried = 0;
  for (const std::string& path : candidates) {
    if (!fs::exists(path) || read_file(path).empty()) continue;
    expect_shuffled_whole(path);  // it was "Input/output error"
    ++tried;
  }
  if (tried == 0) GTEST_SKIP() << "none of the /sys files tried is readable here";
}

TEST(PseudoFiles, AnOutputOnAPseudoFileSystemIsRefusedWithTheReason) {
  if (!fs::exists("/proc/self/comm")) GTEST_SKIP() << "no /proc";
  // It said "No such file or directory" of a file that exists.
  for (const std::string path : {"/proc/self/comm", "/proc/sys/fs/file-max"}) {
    const auto r = run_binary({"-i", "1-10", "-o", path});
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_TRUE(is_one_line_error(r.err, "cannot write output '" + path +
                                             "': it lies on the kernel's proc file system, which takes no new files"))
        << r.err;
  }
}

// The first lseek of a run is STXXL's size() of its input (SEEK_END):
// failed by strace's injection (the event), it said "Error in
// stxxl::file::offset_type stxxl::ufs_file_base::_size() : lseek(fd,0,
// SEEK_END) path=... : Input/output error: iostream error".
TEST(StxxlErrors, ReachTheUserInTheOneLineForm) {
  if (run_command("command -v strace").exit_code != 0) GTEST_SKIP() << "strace is not installed";
  Workspace w;
  write_file(w.input(), "1\n2\n3\n");
  const std::string environment = binary_is_sanitized() ? "ASAN_OPTIONS=\"$ASAN_OPTIONS:detect_leaks=0\" " : "";
  const auto r =
      run_command(environment + "strace -f -qq -o /dev/null -e trace=lseek -e inject=lseek:error=EIO:when=1 " +
                  kBinary + " " + w.input() + " -o " + w.output());
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.err, "extshuffle: cannot read input '" + w.input() + "': Input/output error\n");
  EXPECT_EQ(entries(w.out_dir), std::vector<std::string>{});
}

}  // namespace
}  // namespace extshuffle::testing::pseudo_files_test
