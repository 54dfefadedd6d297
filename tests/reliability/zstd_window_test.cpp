// A zstd input's window within --memory (docs/cli.md "Compressed input and
// output", docs/reliability.md): at -S 16M an input written with zstd
// --long=27 (a 128 MiB window) ran, its decoder's window on top of the
// budget (155 MB at its peak). It is refused before any work, naming the
// budget that reads it; with that budget it runs within -S plus the fixed
// allowance.
#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "reliability_support.hpp"

namespace extshuffle::testing::zstd_window_test {
namespace {

std::uint64_t peak_rss_bytes(const std::string& err) {
  std::smatch found;
  if (!std::regex_search(err, found, std::regex("peak_rss_bytes=([0-9]+)"))) return UINT64_MAX;
  return std::stoull(found[1].str());
}

TEST(ZstdWindow, AWindowTheBudgetCannotHoldIsRefusedUpFront) {
  if (run_command("command -v zstd").exit_code != 0) GTEST_SKIP() << "zstd is not installed";
  Workspace w;
  const std::string input = (w.in_dir / "in.txt.zst").string();
  // From a pipe the size is unknown: the frame keeps its 128 MiB window.
  ASSERT_EQ(run_command("seq 1 200000 | zstd -q --long=27 -c > " + input).exit_code, 0);
  auto r = run_binary({input, "-S", "16M", "-T", w.tmp_dir.string(), "-o", w.output()});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(is_one_line_error(r.err,
                                "input '.*in\\.txt\\.zst': its zstd window of 128 MiB \\(written with zstd "
                                "--long\\?\\) does not fit in the 16 MiB the memory budget holds: --memory "
                                "must be at least 128M to read it"))
      << r.err;
  EXPECT_EQ(entries(w.out_dir), std::vector<std::string>{});
  EXPECT_EQ(entries(w.tmp_dir), std::vector<std::string>{});
  r = run_binary({input, "-S", "128M", "-T", w.tmp_dir.string(), "-o", w.output(), "--stats", "--seed", "1"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  // Not under AddressSanitizer: its quarantine and shadow fill memory.
  if (!binary_is_sanitized()) {
    EXPECT_LE(peak_rss_bytes(r.err), (std::uint64_t{128} << 20) + (std::uint64_t{64} << 20)) << r.err;
  }
  const std::string output = read_file(w.output());
  EXPECT_EQ(std::count(output.begin(), output.end(), '\n'), 200000);
}

}  // namespace
}  // namespace extshuffle::testing::zstd_window_test
