// A fixed-size input that fits in RAM is held once, whatever the budget: the
// run's peak RSS (--stats' peak_rss_bytes) stays within 1.1 times the input
// plus 64 MiB at -S of 1, 2 and 4 times the input (the budget is a cap, not
// an invitation to a second copy). Three inputs of 96 MiB: 8-byte records
// (two levels of the plan, read in batches), 512-byte records (one leaf,
// which a larger budget once shuffled into a copy of itself) and a .npy of
// 512-byte rows. The output is checked to be a permutation of the input, and
// the same at every budget. At 2x and 4x the input is mapped (it takes under
// 95% of the budget): the leaves of 512-byte records then run where their
// records lie, and the mapped pages count in the peak RSS as the arena's
// copy did; at 1x they are read into the arena, so the same output at every
// budget also pins the mapped runs to the read ones. Deterministic: the
// false-failure rate is 0. Not under AddressSanitizer, whose quarantine
// keeps freed memory resident.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "support/command.hpp"
#include "support/test_values.hpp"
#include "support/npy_files.hpp"
#include "support/permutations.hpp"

namespace extshuffle::testing::in_ram_rss_test {
namespace {

const std::string kBinary = extshuffle_binary();
constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;
constexpr std::uint64_t kInputBytes = 96 * kMiB;


// Runs `input` at -S 1x, 2x and 4x its size: peak RSS within 1.1x + 64 MiB,
// the same output each time, a permutation of the records.
void check_held_once(const TempDir& dir, const std::string& input, const std::string& options,
                     std::uint64_t header_bytes, std::size_t record_size) {
  if (binary_is_sanitized()) GTEST_SKIP() << "AddressSanitizer keeps freed memory resident";
  std::string reference;
  for (const std::uint64_t times : {1, 2, 4}) {
    const std::uint64_t budget = times * kInputBytes;
    SCOPED_TRACE("-S " + std::to_string(times) + "x the input");
    const std::string out = (dir / "out").string();
    const CommandResult r = run_command(kBinary + " " + input + " " + options + " --seed 5 --stats -S " +
                                        std::to_string(budget / 1024) + "K -T " + dir.path().string() + " -o " + out);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::uint64_t peak = number_after(r.err, " peak_rss_bytes=");
    EXPECT_LE(peak, kInputBytes + kInputBytes / 10 + 64 * kMiB) << r.err;
    // The records after the header, read in place (a copy of 96 MiB at -O0
    // is a second of the test's CPU).
    std::string output = read_file(out);
    ASSERT_GE(output.size(), header_bytes);
    const std::string_view records = std::string_view(output).substr(header_bytes);
    if (times == 1) {
      ASSERT_TRUE(
          is_permutation_of_iota(record_indices(as_bytes(std::span(records.data(), records.size())), record_size)));
      reference = std::move(output);
    } else {
      EXPECT_TRUE(records == std::string_view(reference).substr(header_bytes));
    }
  }
}

// Writes `bytes` to `path` without a copy into a string first.
void write_bytes(const std::filesystem::path& path, const std::vector<std::byte>& bytes) {
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

TEST(InRamRss, EightByteRecordsHeldOnce) {
  TempDir dir;
  write_bytes(dir / "in.bin", numbered_records(kInputBytes / 8, 8));
  check_held_once(dir, (dir / "in.bin").string(), "--record-size 8", 0, 8);
}

TEST(InRamRss, LargeRecordsHeldOnce) {
  TempDir dir;
  write_bytes(dir / "in.bin", numbered_records(kInputBytes / 512, 512));
  check_held_once(dir, (dir / "in.bin").string(), "--record-size 512", 0, 512);
}

TEST(InRamRss, NpyRowsHeldOnce) {
  TempDir dir;
  const auto rows = numbered_records(kInputBytes / 512, 512);
  const std::string file =
      npy_file(1, "{'descr': '|u1', 'fortran_order': False, 'shape': (" + std::to_string(kInputBytes / 512) +
                      ", 512), }",
               std::string(reinterpret_cast<const char*>(rows.data()), rows.size()));
  write_file(dir / "in.npy", file);
  check_held_once(dir, (dir / "in.npy").string(), "", file.size() - rows.size(), 512);
}

}  // namespace
}  // namespace extshuffle::testing::in_ram_rss_test
