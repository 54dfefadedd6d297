// Black-box tests of the extshuffle binary on fixed-size records: exit codes,
// messages, stdin/stdout, safety of the output path, and determinism across
// --memory and --threads. EXTSHUFFLE_BINARY is set by CMake.
#include <gtest/gtest.h>

#include <regex>
#include <vector>

#include "extshuffle/device/host_memory.hpp"
#include "extshuffle/device/shuffle_records.hpp"
#include "support/command.hpp"
#include "support/permutations.hpp"

namespace extshuffle::testing::fixed_records_cli_test {
namespace {

const std::string kBinary = extshuffle_binary();

std::string records_u64(std::uint64_t n) {
  const auto data = numbered_records(n, 8);
  return std::string(reinterpret_cast<const char*>(data.data()), data.size());
}

std::vector<std::uint64_t> indices_of(const std::string& bytes) {
  return record_indices(std::as_bytes(std::span(bytes.data(), bytes.size())), 8);
}

bool directory_has_only(const std::filesystem::path& dir, std::vector<std::string> names) {
  std::vector<std::string> present;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) present.push_back(entry.path().filename());
  std::sort(present.begin(), present.end());
  std::sort(names.begin(), names.end());
  return present == names;
}

TEST(FixedRecordsCli, ShufflesAFileIntoAPermutation) {
  TempDir dir;
  write_file(dir / "in.bin", records_u64(100000));
  // Run from the test directory: STXXL must leave no stxxl.log or
  // stxxl.errlog in the working directory, and say nothing.
  const auto r = run_command("cd " + dir.path().string() + " && " + kBinary + " in.bin out.bin" +
                             " --record-size 8 --seed 42 -S 16M");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "");
  const auto out = read_file(dir / "out.bin");
  EXPECT_TRUE(is_permutation_of_iota(indices_of(out)));
  EXPECT_DIFFERENT_BYTES(out, read_file(dir / "in.bin"));
  EXPECT_TRUE(directory_has_only(dir.path(), {"in.bin", "out.bin"}));  // no temporary or scratch left
}

// The contract of docs/conventions.md, The contract: same seed and N, same bytes, whatever the
// memory budget (in RAM, one and two disk passes), thread count or path.
TEST(FixedRecordsCli, SameSeedSameBytesAcrossMemoryThreadsAndStdio) {
  TempDir dir;
  const std::string in = (dir / "in.bin").string();
  write_file(in, records_u64((1 << 21) + 7));
  const std::string base = kBinary + " --record-size 8 --seed 7 -T " + dir.path().string();
  ASSERT_EQ(run_command(base + " -S 1G " + in + " " + (dir / "ram.bin").string()).exit_code, 0);
  const auto disk = run_command(base + " -S 16M -j 1 --stats " + in + " -o " + (dir / "disk.bin").string());
  ASSERT_EQ(disk.exit_code, 0) << disk.err;
  EXPECT_NE(disk.err.find("passes=2"), std::string::npos) << disk.err;
  ASSERT_EQ(run_command(base + " -S 20M -j 2 " + in + " " + (dir / "disk2.bin").string()).exit_code, 0);
  ASSERT_EQ(run_command("cat " + in + " | " + base + " -S 16M > " + (dir / "pipe.bin").string()).exit_code, 0);
  ASSERT_EQ(run_command(base + " - < " + in + " > " + (dir / "dash.bin").string()).exit_code, 0);
  const auto expected = read_file(dir / "ram.bin");
  EXPECT_TRUE(is_permutation_of_iota(indices_of(expected)));
  for (const char* name : {"disk.bin", "disk2.bin", "pipe.bin", "dash.bin"}) {
    EXPECT_SAME_BYTES(read_file(dir / name), expected) << name;
  }
  EXPECT_TRUE(directory_has_only(dir.path(), {"in.bin", "ram.bin", "disk.bin", "disk2.bin", "pipe.bin", "dash.bin"}));
}

// -n K prints the first K records of the full shuffle, in RAM, through
// disk, from standard input; K beyond N prints all N.
TEST(FixedRecordsCli, HeadCountIsThePrefixOfTheFullShuffle) {
  TempDir dir;
  const std::string in = (dir / "in.bin").string();
  write_file(in, records_u64((1 << 21) + 5));
  const std::string base = kBinary + " --record-size 8 --seed 11 -T " + dir.path().string() + " ";
  ASSERT_EQ(run_command(base + in + " " + (dir / "full.bin").string()).exit_code, 0);
  const std::string full = read_file(dir / "full.bin");
  for (const std::string k : {"0", "1", "12345", "2097157", "3000000"}) {
    const auto disk = run_command(base + "-S 12M -n " + k + " " + in + " " + (dir / "head.bin").string());
    ASSERT_EQ(disk.exit_code, 0) << disk.err;
    const std::size_t bytes = std::min<std::size_t>(std::stoull(k), (1 << 21) + 5) * 8;
    EXPECT_SAME_BYTES(read_file(dir / "head.bin"), full.substr(0, bytes)) << "k " << k;
    const auto piped = run_command("cat " + in + " | " + base + "--head-count " + k + " > " + (dir / "pipe.bin").string());
    ASSERT_EQ(piped.exit_code, 0) << piped.err;
    EXPECT_SAME_BYTES(read_file(dir / "pipe.bin"), full.substr(0, bytes)) << "k " << k;
  }
}

// shuf's -i LO-HI and -e: the items in the order of P(seed, N), the same
// order a file of N records gets with that seed; -n takes its prefix.
TEST(FixedRecordsCli, GeneratedInputsAsShuf) {
  TempDir dir;
  write_file(dir / "ten.bin", records_u64(10));
  ASSERT_EQ(run_command(kBinary + " --record-size 8 --seed 5 " + (dir / "ten.bin").string() + " " +
                        (dir / "ten_out.bin").string()).exit_code, 0);
  std::string expected_range, expected_echo;
  const char* words[] = {"w0", "w1", "w2", "w3", "w4", "w5", "w6", "w7", "w8", "w9"};
  for (std::uint64_t index : indices_of(read_file(dir / "ten_out.bin"))) {
    expected_range += std::to_string(101 + index) + "\n";
    expected_echo += std::string(words[index]) + "\n";
  }
  const auto range = run_command(kBinary + " -i 101-110 --seed 5");
  EXPECT_EQ(range.exit_code, 0) << range.err;
  EXPECT_SAME_BYTES(range.out, expected_range);
  const auto echo = run_command(kBinary + " --seed 5 -e w0 w1 w2 w3 w4 w5 w6 w7 w8 w9");
  EXPECT_EQ(echo.exit_code, 0) << echo.err;
  EXPECT_SAME_BYTES(echo.out, expected_echo);
  const auto head = run_command(kBinary + " -i 101-110 --seed 5 -n 3 -o " + (dir / "head.txt").string());
  EXPECT_EQ(head.exit_code, 0) << head.err;
  EXPECT_SAME_BYTES(read_file(dir / "head.txt"), expected_range.substr(0, 12));
  EXPECT_EQ(run_command(kBinary + " -i 5-4").out, "");
  EXPECT_EQ(run_command(kBinary + " -e").out, "");
  const auto big = run_command(kBinary + " -i 1-300000 --seed 2 -S 12M | sort -n | uniq | wc -l");
  EXPECT_EQ(big.out, "300000\n");
  for (const char* bad : {"-i 3", "-i 4-2", "-i a-b", "-i 1-2 extra", "-i 0-18446744073709551615", "-e a -i 1-2"}) {
    const auto r = run_command(kBinary + " " + bad);
    EXPECT_EQ(r.exit_code, 2) << bad << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << bad << ": " << r.err;
  }
}

TEST(FixedRecordsCli, OutputMayNameTheInput) {
  TempDir dir;
  const std::string in = (dir / "data.bin").string();
  write_file(in, records_u64(5000));
  write_file(dir / "copy.bin", records_u64(5000));
  ASSERT_EQ(run_command(kBinary + " --record-size 8 --seed 3 " + (dir / "copy.bin").string() + " " +
                        (dir / "expected.bin").string()).exit_code, 0);
  const auto r = run_command(kBinary + " --record-size 8 --seed 3 " + in + " -o " + in);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_SAME_BYTES(read_file(in), read_file(dir / "expected.bin"));
}

TEST(FixedRecordsCli, EmptyInputGivesEmptyOutput) {
  TempDir dir;
  write_file(dir / "empty.bin", "");
  const auto r = run_command(kBinary + " --record-size 8 " + (dir / "empty.bin").string() + " " +
                             (dir / "out.bin").string());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(std::filesystem::exists(dir / "out.bin"));
  EXPECT_SAME_BYTES(read_file(dir / "out.bin"), "");
}

struct BadCase {
  std::string name;
  std::string arguments;  // $D is replaced by the test directory
  int exit_code;
  std::string message;    // a regular expression the one-line message must match
};

// Every error is one line "extshuffle: <what>: <why>", exit 1 (runtime) or 2
// (usage), and leaves neither a destination nor a temporary file behind.
TEST(FixedRecordsCli, BadInputIsAOneLineErrorAndLeavesNothing) {
  const std::vector<BadCase> cases = {
      {"not a multiple", "$D/odd.bin $D/out.bin --record-size 8", 1,
       "input '.*odd.bin': its size, 8003 bytes, is not a multiple of the record size 8 \\(remainder 3 bytes\\)"},
      {"missing input", "$D/nope.bin $D/out.bin --record-size 8", 1, "cannot open input '.*nope.bin': No such file"},
      // A directory stands for its files (odd.bin, text.txt), the first of which is refused.
      {"input is a directory", "$D/ -o $D/odd.bin --record-size 8", 1, "odd.bin': its size, 8003 bytes"},
      {"output in the input directory", "$D $D/out.bin --record-size 8", 2, "lies in the input directory"},
      {"output is a directory", "$D/odd.bin $D --record-size 1", 2, "cannot write output '.*': Is a directory"},
      {"output directory missing", "$D/odd.bin $D/no/out.bin --record-size 1", 2,
       "cannot write output '.*no/out.bin': No such file"},
      {"tmpdir missing", "$D/odd.bin $D/out.bin --record-size 1 -T $D/none", 1, "scratch directory '.*none'"},
      {"bad memory", "$D/odd.bin $D/out.bin --record-size 1 -S 12Q", 2, "invalid --memory '12Q'"},
      {"memory too small", "$D/odd.bin $D/out.bin --record-size 1 -S 10K", 2, "--memory must be at least"},
      {"bad seed", "$D/odd.bin $D/out.bin --record-size 1 --seed -4", 2, "invalid --seed '-4'"},
      {"bad record size", "$D/odd.bin $D/out.bin --record-size 0", 2, "invalid --record-size '0'"},
      {"unknown option", "$D/odd.bin $D/out.bin --record-size 1 --frobnicate", 2, "frobnicate"},
      {"binary without record size", "$D/odd.bin $D/out.bin", 2, "is binary \\(NUL bytes in its first 64 KiB\\): give --record-size"},
      {"binary format without record size", "$D/text.txt $D/out.bin --format binary", 2,
       "--format binary needs --record-size"},
      {"record size with a text format", "$D/text.txt $D/out.bin --format lines --record-size 4", 2,
       "--record-size is for binary records"},
      {"three files", "$D/odd.bin $D/out.bin $D/third.bin --record-size 1", 2, ".+"},
  };
  for (const BadCase& c : cases) {
    TempDir dir;
    std::string odd(8003, '\0');
    write_file(dir / "odd.bin", odd);
    write_file(dir / "text.txt", "b\na\n");
    std::string arguments = std::regex_replace(c.arguments, std::regex("\\$D"), dir.path().string());
    const auto r = run_command(kBinary + " " + arguments);
    EXPECT_EQ(r.exit_code, c.exit_code) << c.name << ": " << r.err;
    EXPECT_TRUE(std::regex_search(r.err, std::regex("^extshuffle: .*" + c.message + ".*\n$")))
        << c.name << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << c.name << ": " << r.err;
    EXPECT_TRUE(directory_has_only(dir.path(), {"odd.bin", "text.txt"})) << c.name;
    EXPECT_SAME_BYTES(read_file(dir / "odd.bin"), odd) << c.name;  // the input is never modified
  }
}

// SIGINT and SIGTERM in the middle of a run: the signal's exit status, the
// old destination untouched, no temporary output and no scratch file left.
// The run reads a pipe the test holds open, so it cannot publish before the
// test closes it: the signal is sent once the test's write of 1 MiB, 16
// times the pipe's buffer, has returned (the run is reading: an event, not a
// head start on the clock), and the pipe is closed after it.
TEST(FixedRecordsCli, InterruptLeavesTheDestinationAndNoScratch) {
  TempDir dir;
  write_file(dir / "in.bin", records_u64(std::uint64_t{1} << 17));
  write_file(dir / "out.bin", "old contents");
  for (const auto& [signal, status] : {std::pair{"INT", 130}, std::pair{"TERM", 143}}) {
    const auto r = run_command("cd " + dir.path().string() + " && mkfifo in.fifo && { " + kBinary +
                               " --record-size 8 --seed 1 -S 16M -T . - out.bin < in.fifo & } && pid=$! && "
                               "exec 3> in.fifo && cat in.bin >&3 && kill -" +
                               signal + " $pid; exec 3>&-; wait $pid; echo status=$?; rm -f in.fifo");
    EXPECT_NE(r.out.find("status=" + std::to_string(status)), std::string::npos) << signal << ": " << r.out << r.err;
    EXPECT_SAME_BYTES(read_file(dir / "out.bin"), "old contents") << signal;
    EXPECT_TRUE(directory_has_only(dir.path(), {"in.bin", "out.bin"})) << signal;
  }
}

// --device cuda without a usable GPU is a clear error, never a silent CPU run.
TEST(FixedRecordsCli, CudaWithoutAGpuIsAnError) {
  if (device::cuda_available()) GTEST_SKIP() << "a GPU is present: the gpu-labelled tests cover it";
  TempDir dir;
  write_file(dir / "in.bin", records_u64(1000));
  const auto r = run_command(kBinary + " --device cuda --record-size 8 " + (dir / "in.bin").string() + " " +
                             (dir / "out.bin").string());
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_TRUE(std::regex_search(r.err, std::regex("^extshuffle: CUDA device requested: .+\n$"))) << r.err;
  EXPECT_TRUE(directory_has_only(dir.path(), {"in.bin"}));
}

TEST(FixedRecordsCli, DryRunPrintsThePlanAndWritesNothing) {
  TempDir dir;
  write_file(dir / "in.bin", records_u64(1 << 21));
  const auto r = run_command(kBinary + " --dry-run --record-size 8 -S 16M " + (dir / "in.bin").string() + " " +
                             (dir / "out.bin").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("2097152 records of 8 bytes"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("2 passes through disk"), std::string::npos) << r.out;
  EXPECT_FALSE(std::filesystem::exists(dir / "out.bin"));
}

TEST(FixedRecordsCli, VersionNamesThePermutationVersion) {
  const auto r = run_command(kBinary + " --version");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("permutation version 2"), std::string::npos) << r.out;
  const auto help = run_command(kBinary + " --help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("--record-size"), std::string::npos);
}

TEST(FixedRecordsCli, RandomSeedIsShownWithVerbose) {
  TempDir dir;
  write_file(dir / "in.bin", records_u64(1000));
  const auto r = run_command(kBinary + " -v --record-size 8 " + (dir / "in.bin").string() + " " +
                             (dir / "out.bin").string());
  ASSERT_EQ(r.exit_code, 0);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.err, m, std::regex("--seed ([0-9]+)"))) << r.err;
  ASSERT_EQ(run_command(kBinary + " --record-size 8 --seed " + m[1].str() + " " + (dir / "in.bin").string() + " " +
                        (dir / "again.bin").string()).exit_code, 0);
  EXPECT_SAME_BYTES(read_file(dir / "out.bin"), read_file(dir / "again.bin"));
}

// The memory budget is a hard cap: peak RSS (getrusage, reported by --stats)
// stays within --memory + 64 MiB, for small records (two disk passes) and
// for large ones (a leaf bigger than memory, gathered by index).
TEST(FixedRecordsCli, PeakMemoryStaysWithinTheBudget) {
  TempDir dir;
  for (const auto& [record_size, records] : {std::pair{std::size_t{8}, std::size_t{16} << 20}, std::pair{std::size_t{4096}, std::size_t{32} << 10}}) {
    const std::string in = (dir / "in.bin").string();
    write_file(in, std::string(record_size * records, 'x'));
    const auto r = run_command(kBinary + " --stats -S 16M --record-size " + std::to_string(record_size) +
                               " --seed 1 -T " + dir.path().string() + " " + in + " " + (dir / "out.bin").string());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(r.err, m, std::regex("peak_rss_bytes=([0-9]+)"))) << r.err;
    EXPECT_LE(std::stoull(m[1].str()), (16ull << 20) + (64ull << 20)) << "record size " << record_size;
    EXPECT_EQ(read_file(dir / "out.bin").size(), record_size * records);
  }
}

// OpenMP threads wait passively unless the user says otherwise: libgomp,
// asked to show its settings (OMP_DISPLAY_ENV), spins 0 times by default
// (in the program executed again; the first shows libgomp's own default)
// and keeps a policy or spin count given in the environment.
TEST(FixedRecordsCli, OpenMpThreadsWaitPassivelyUnlessTold) {
  TempDir dir;
  const std::string in = (dir / "in.bin").string();
  write_file(in, records_u64(1000));
  const std::string run = kBinary + " --record-size 8 --seed 1 " + in + " -o " + (dir / "out.bin").string();
  const auto by_default = run_command("OMP_DISPLAY_ENV=verbose " + run);
  ASSERT_EQ(by_default.exit_code, 0) << by_default.err;
  EXPECT_NE(by_default.err.find("GOMP_SPINCOUNT = '0'"), std::string::npos) << by_default.err;
  const auto told = run_command("OMP_DISPLAY_ENV=verbose GOMP_SPINCOUNT=12345 " + run);
  ASSERT_EQ(told.exit_code, 0) << told.err;
  EXPECT_NE(told.err.find("GOMP_SPINCOUNT = '12345'"), std::string::npos) << told.err;
  EXPECT_EQ(told.err.find("GOMP_SPINCOUNT = '0'"), std::string::npos) << told.err;
  const auto active = run_command("OMP_DISPLAY_ENV=verbose OMP_WAIT_POLICY=active " + run);
  ASSERT_EQ(active.exit_code, 0) << active.err;
  EXPECT_NE(active.err.find("OMP_WAIT_POLICY = 'ACTIVE'"), std::string::npos) << active.err;
  EXPECT_EQ(active.err.find("OMP_WAIT_POLICY = 'PASSIVE'"), std::string::npos) << active.err;
}

// --stats says how much memory transparent huge pages backed: a number on
// every run, and, where the kernel offers them on request (madvise or
// always, as /sys says) and the program asks (not in a VM that reports free
// pages to its host), at least one 2 MiB page for a 64 MiB node in RAM.
TEST(FixedRecordsCli, StatsSayWhetherHugePagesWereUsed) {
  TempDir dir;
  const std::string in = (dir / "in.bin").string();
  write_file(in, records_u64(std::size_t{8} << 20));
  const auto r = run_command(kBinary + " --stats --record-size 8 --seed 1 -S 1G -T " + dir.path().string() + " " +
                             in + " -o " + (dir / "out.bin").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.err, m, std::regex("huge_page_bytes=([0-9]+)"))) << r.err;
  const std::string mode = read_file("/sys/kernel/mm/transparent_hugepage/enabled");
  const bool offered = mode.find("[always]") != std::string::npos || mode.find("[madvise]") != std::string::npos;
  if (offered && !device::host_takes_back_free_pages()) {
    EXPECT_GE(std::stoull(m[1].str()), std::uint64_t{2} << 20) << mode;
  } else if (mode.find("[never]") != std::string::npos) {
    EXPECT_EQ(std::stoull(m[1].str()), 0u);
  }
  EXPECT_TRUE(is_permutation_of_iota(indices_of(read_file(dir / "out.bin"))));
}

}  // namespace
}  // namespace extshuffle::testing::fixed_records_cli_test
