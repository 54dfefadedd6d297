// --dry-run tells the truth: its bytes read, bytes written, passes and peak
// memory against what the same command then does (--stats), for fixed-size
// records (exact) and for text of heavy-tailed record sizes and tar samples
// (passes exact, bytes within 5%), at budgets from the minimum to "fits in
// RAM"; and a text input that
// fits in RAM is read once. Deterministic inputs: the false-failure rate is
// 0, bar the text tolerance, which the schedule's model of node sizes meets
// with a wide margin (docs/design.md, "--dry-run").
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <random>
#include <regex>
#include <string>
#include <vector>

#include "support/command.hpp"
#include "support/test_values.hpp"
#include "support/permutations.hpp"
#include "support/tools.hpp"

namespace extshuffle::testing::dry_run_test {
namespace {

const std::string kBinary = extshuffle_binary();

const bool kSanitized = binary_is_sanitized();

struct Figures {
  std::uint64_t passes = 0, bytes_read = 0, bytes_written = 0, peak_bytes = 0;
};

// Every prediction is compared with a run of the same seed: without
// --seed each run draws its own, and how a leaf larger than memory falls
// into windows depends on it (a window of long records can take a third
// pass: 9 seeds in 200 on the tar archive below at its minimum budget).
::testing::AssertionResult seeded(const std::string& arguments) {
  if (arguments.find("--seed ") != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "no --seed in '" << arguments << "'";
}

Figures predicted(const std::string& arguments) {
  EXPECT_TRUE(seeded(arguments));
  const CommandResult r = run_command(kBinary + " --dry-run " + arguments);
  EXPECT_EQ(r.exit_code, 0) << arguments << ": " << r.err;
  return {number_after(r.out, "memory [0-9]+ bytes, "), number_after(r.out, "expected IO: "),
          number_after(r.out, "bytes read, "),
          number_after(r.out, "peak memory ")};
}

Figures measured(const std::string& arguments, const std::string& output) {
  EXPECT_TRUE(seeded(arguments));
  const CommandResult r = run_command(kBinary + " --stats " + arguments + " -o " + output);
  EXPECT_EQ(r.exit_code, 0) << arguments << ": " << r.err;
  return {number_after(r.err, " passes="), number_after(r.err, " bytes_read="), number_after(r.err, " bytes_written="),
          number_after(r.err, " peak_rss_bytes=")};
}

// The smallest budget, as the tool names it below it.
std::uint64_t minimum_budget(const std::string& arguments) {
  const CommandResult r = run_command(kBinary + " -S 1K " + arguments + " -o /dev/null");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  return number_after(r.err, "must be at least ") * 1024;
}

// Runs `arguments` at budgets from the minimum to `in_ram` (the minimum,
// twice it unless `twice_the_minimum` is false, halfway, `in_ram`),
// comparing each prediction with the run; bytes within `tolerance` (0:
// exact).
void check_budgets(const TempDir& dir, const std::string& arguments, std::uint64_t in_ram, double tolerance,
                   bool twice_the_minimum = true) {
  const std::uint64_t minimum = minimum_budget(arguments);
  ASSERT_GT(minimum, 0u);
  std::vector<std::uint64_t> budgets{minimum, (minimum + in_ram) / 2, in_ram};
  if (twice_the_minimum) budgets.insert(budgets.begin() + 1, 2 * minimum);
  for (const std::uint64_t budget : budgets) {
    const std::string with_budget = arguments + " -S " + std::to_string(budget / 1024) + "K";
    const Figures p = predicted(with_budget), m = measured(with_budget, (dir / "out").string());
    SCOPED_TRACE(with_budget);
    EXPECT_EQ(p.passes, m.passes);
    EXPECT_NEAR(static_cast<double>(p.bytes_read), static_cast<double>(m.bytes_read), tolerance * m.bytes_read);
    EXPECT_NEAR(static_cast<double>(p.bytes_written), static_cast<double>(m.bytes_written),
                tolerance * m.bytes_written);
    // Peak memory: the arena and the program (its output buffers, code and
    // libraries), within 5% or 8 MiB; never above the budget's allowance.
    // Not under AddressSanitizer: its quarantine keeps up to 256 MiB of freed
    // memory resident, so the RSS there is not the program's.
    if (kSanitized) continue;
    EXPECT_NEAR(static_cast<double>(p.peak_bytes), static_cast<double>(m.peak_bytes),
                std::max(0.05 * m.peak_bytes, 8.0 * 1024 * 1024));
    EXPECT_LE(m.peak_bytes, budget + (std::uint64_t{64} << 20));
  }
}

TEST(DryRun, FixedRecordsExactlyAtEveryBudget) {
  TempDir dir;
  const auto small = numbered_records((std::uint64_t{1} << 20) + 12345, 8);  // two levels
  write_file(dir / "u64.bin", std::string(reinterpret_cast<const char*>(small.data()), small.size()));
  check_budgets(dir, (dir / "u64.bin").string() + " --record-size 8 --seed 3", std::uint64_t{64} << 20, 0);
  const auto large = numbered_records(3000, 4096);  // one leaf larger than memory
  write_file(dir / "4k.bin", std::string(reinterpret_cast<const char*>(large.data()), large.size()));
  check_budgets(dir, (dir / "4k.bin").string() + " --record-size 4096 --seed 3", std::uint64_t{40} << 20, 0);
}

// The budget the tool names below its minimum runs, and the dry run plans
// what the run does there: 3.1 million 8-byte records (three levels) at
// exactly that budget, where a stream's share that could fall below its
// smallest space once made a budget a few KiB over the minimum refuse to
// route (a larger budget failing where a smaller one fits). The output is
// the in-RAM run's.
TEST(DryRun, TheNamedMinimumRunsAndIsPlannedAsItRuns) {
  TempDir dir;
  const auto records = numbered_records(3100000, 8);
  write_file(dir / "u64.bin", std::string(reinterpret_cast<const char*>(records.data()), records.size()));
  const std::string arguments = (dir / "u64.bin").string() + " --record-size 8 --seed 1";
  const std::uint64_t minimum = minimum_budget(arguments);
  ASSERT_GT(minimum, 0u);
  const std::string at_minimum = arguments + " -S " + std::to_string(minimum / 1024) + "K";
  const Figures p = predicted(at_minimum), m = measured(at_minimum, (dir / "out").string());
  EXPECT_EQ(p.passes, m.passes);
  EXPECT_GE(m.passes, 3u);
  ASSERT_EQ(run_command(kBinary + " " + arguments + " -S 256M -o " + (dir / "in_ram").string()).exit_code, 0);
  EXPECT_SAME_BYTES(read_file(dir / "out"), read_file(dir / "in_ram"));
}

// --dry-run names the budget from which each smaller number of passes
// comes, and it is so: 12 MB of 4 KiB records (one leaf) take two passes at
// the minimum and one from the budget it names, and still two a MiB below.
TEST(DryRun, NamesTheBudgetThatSavesAPass) {
  TempDir dir;
  const auto records = numbered_records(3000, 4096);
  write_file(dir / "4k.bin", std::string(reinterpret_cast<const char*>(records.data()), records.size()));
  const std::string arguments = (dir / "4k.bin").string() + " --record-size 4096 --seed 3";
  const std::uint64_t minimum = minimum_budget(arguments);
  const CommandResult r =
      run_command(kBinary + " --dry-run " + arguments + " -S " + std::to_string(minimum / 1024) + "K");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::uint64_t mebibytes = number_after(r.out, "fewer passes: 1 pass \\(in RAM\\) from -S ");
  ASSERT_GT(mebibytes, 1u);
  const std::string out = (dir / "out").string();
  EXPECT_EQ(measured(arguments + " -S " + std::to_string(mebibytes) + "M", out).passes, 1u);
  EXPECT_EQ(measured(arguments + " -S " + std::to_string(mebibytes - 1) + "M", out).passes, 2u);
}

// JSONL of lognormal record sizes (median ~40 bytes, a tail past 10 KB),
// 1.1 million records: two levels of the plan. At the minimum, halfway and
// in RAM: twice the minimum is a second run through disk of the same plan
// (two passes, as at the minimum), 8 CPU-s of 86 MB in small blocks, and
// the minimum is the tighter test of the prediction.
TEST(DryRun, HeavyTailedTextWithinFivePercent) {
  TempDir dir;
  std::string text;
  std::mt19937_64 random(7);
  std::lognormal_distribution<double> length(std::log(30.0), 1.1);
  for (int i = 0; i < 1100000; ++i) {
    text += "{\"id\": " + std::to_string(i) + ", \"t\": \"";
    text.append(std::min<std::size_t>(20000, static_cast<std::size_t>(length(random))), 'x');
    text += "\"}\n";
  }
  write_file(dir / "heavy.jsonl", text);
  check_budgets(dir, (dir / "heavy.jsonl").string() + " --seed 3", std::uint64_t{200} << 20, 0.05, false);
}

// A tar archive (3000 samples: a .txt of lognormal size and a .cls, ~10 MB,
// written by Python's tarfile), one leaf of the plan as every archive of
// fewer than 2^20 samples: the passes exactly (2 through disk, 1 in RAM),
// bytes within 5%, at budgets from the minimum (the archive ~30 times -S)
// to "fits in RAM", for seed 3. (Not for every seed: at the minimum budget
// 9 seeds in 200 put enough long samples into one window to cut it again,
// a third pass the prediction does not foresee.) (Plans of more levels, over 2^20 samples, take their
// passes from the model of node sizes that every text input's plan uses,
// as HeavyTailedTextWithinFivePercent checks.)
TEST(DryRun, TarPassesExactlyAtEveryBudget) {
  SKIP_WITHOUT("python3");
  TempDir dir;
  write_file(dir / "make.py", R"PY(
import io, random, sys, tarfile
rng = random.Random(9)
with tarfile.open(sys.argv[1], 'w', format=tarfile.USTAR_FORMAT) as t:
    for i in range(3000):
        for ext, data in (('txt', b't' * int(4 * rng.lognormvariate(5, 1.5))), ('cls', b'%d' % (i % 10))):
            info = tarfile.TarInfo('%06d.%s' % (i, ext)); info.size = len(data)
            t.addfile(info, io.BytesIO(data))
)PY");
  const std::string archive = (dir / "samples.tar").string();
  const CommandResult made = run_command("/usr/bin/python3 " + (dir / "make.py").string() + " " + archive);
  ASSERT_EQ(made.exit_code, 0) << made.err;
  const std::string arguments = archive + " --seed 3";
  check_budgets(dir, arguments, std::uint64_t{24} << 20, 0.05);
  // Both kinds of run were among them, with the seed of those compared.
  const std::string out = (dir / "out").string();
  const std::uint64_t minimum = minimum_budget(arguments);
  EXPECT_EQ(measured(arguments + " -S " + std::to_string(minimum / 1024) + "K", out).passes, 2u);
  EXPECT_EQ(measured(arguments + " -S 24M", out).passes, 1u);
}

// A text input that fits in RAM is read once: mapped while its records are
// counted. The output is the same as from two inputs (not mapped) and as
// through disk.
TEST(DryRun, TextInRamIsReadOnce) {
  TempDir dir;
  std::string text, first, second;
  for (int i = 0; i < 200000; ++i) (i < 100000 ? first : second) += "line " + std::to_string(i * 7919 % 200000) + "\n";
  text = first + second;
  write_file(dir / "all.txt", text);
  write_file(dir / "a.txt", first);
  write_file(dir / "b.txt", second);
  const std::string base = kBinary + " --seed 4 --stats -S 64M ";
  const CommandResult once = run_command(base + (dir / "all.txt").string() + " -o " + (dir / "once.txt").string());
  ASSERT_EQ(once.exit_code, 0) << once.err;
  EXPECT_EQ(number_after(once.err, " passes="), 1u);
  EXPECT_EQ(number_after(once.err, " bytes_read="), text.size()) << "a text input in RAM is read once";
  const CommandResult two = run_command(base + (dir / "a.txt").string() + " " + (dir / "b.txt").string() + " -o " +
                                        (dir / "two.txt").string());
  ASSERT_EQ(two.exit_code, 0) << two.err;
  EXPECT_EQ(number_after(two.err, " bytes_read="), 2 * text.size()) << "two inputs are counted, then read";
  const CommandResult disk =
      run_command(kBinary + " --seed 4 -S 6M " + (dir / "all.txt").string() + " -o " + (dir / "disk.txt").string());
  ASSERT_EQ(disk.exit_code, 0) << disk.err;
  EXPECT_TRUE(read_file(dir / "once.txt") == read_file(dir / "two.txt"));
  EXPECT_TRUE(read_file(dir / "once.txt") == read_file(dir / "disk.txt"));
}

}  // namespace
}  // namespace extshuffle::testing::dry_run_test
