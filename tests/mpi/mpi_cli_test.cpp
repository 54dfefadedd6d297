// extshuffle-mpi against extshuffle, byte for byte (cmp): the output of a
// run on P ranks must be the single-machine output for every P, budget and
// thread count, on every format: fixed-size records, .npy, lines, NUL-ended
// lines, CSV with quoted newlines (and quotes that a parity count would
// misread), JSONL, aligned inputs and -n. The testing knobs (L = 64,
// F = 8) give a few thousand records three plan levels, and ranks that
// split chunks and buckets unevenly: 8 buckets on 3 or 5 ranks, N not a
// multiple of L, fewer chunks than ranks, a root that is one leaf, nothing.
// Inputs come from Python's csv and json modules and numpy (make_inputs.py).
// Each mpirun start costs about half a second: a test checks several rank
// counts of one case.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <optional>
#include <regex>
#include <string>

#include "mpi_suite.hpp"

namespace extshuffle::testing::mpi_cli_test {
namespace {

const std::string kKnobs = " --leaf-records 64 --fanout 8 ";

class MpiCli : public MpiSuite<MpiCli> {
 public:
  static constexpr const char* kScript = "make_inputs.py";

 protected:
  // The single-machine output of `name` with `arguments`, then the same
  // command on each of `ranks` ranks, compared byte for byte. With
  // `routed`, each of those runs also says (--stats, which changes no
  // output byte) whether the root's split was routed record by record
  // (routed=1) as `routed` says: one job checked for both.
  void expect_same(const std::string& name, const std::string& arguments, std::initializer_list<int> ranks,
                   std::optional<bool> routed = std::nullopt) {
    const std::string reference = (dir_ / "reference").string();
    const auto single = run_single(input(name) + " " + reference + " --seed 11 -q " + arguments);
    ASSERT_EQ(single.exit_code, 0) << single.err;
    for (const int p : ranks) {
      const std::string output = (dir_ / ("ranks" + std::to_string(p))).string();
      const std::string threads = arguments.find("-j ") == std::string::npos ? " -j 1 " : " ";
      const auto r =
          run_mpi(p, input(name) + " " + output + " --seed 11 -q" + threads + arguments + (routed ? " --stats" : ""));
      EXPECT_EQ(r.exit_code, 0) << "P = " << p << ": " << r.err;
      EXPECT_TRUE(same_bytes(reference, output)) << name << arguments << " on " << p << " ranks";
      EXPECT_EQ(r.out, "");  // stdout carries data only, and here there is none
      if (routed) {
        EXPECT_NE(r.err.find(*routed ? " routed=1 " : " routed=0 "), std::string::npos)
            << arguments << " on " << p << " ranks: " << r.err;
      }
    }
  }

  // Whether the root's split of `name` on `ranks` ranks is routed record by
  // record (--stats: routed=1) as `routed` says.
  void expect_routed(const std::string& name, const std::string& arguments, int ranks, bool routed) {
    const auto r = run_mpi(ranks, input(name) + " " + (dir_ / "routed").string() + " --seed 11 -j 1 --stats " +
                                      arguments);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find(routed ? " routed=1 " : " routed=0 "), std::string::npos) << arguments << ": " << r.err;
  }

};

TEST_F(MpiCli, FixedRecordsOnOneToFiveRanks) {
  expect_same("records.bin", "--record-size 8" + kKnobs, {1, 2, 3, 4, 5});
}

TEST_F(MpiCli, TwelveByteRecordsAtSmallBudgetsAndTwoLevelsOnDisk) {
  // -S 2M: the buckets themselves stream through scratch space.
  expect_same("records12.bin", "--record-size 12 -S 2M" + kKnobs, {2, 3});
}

TEST_F(MpiCli, FewerChunksThanRanksAndALeafRoot) {
  expect_same("few.bin", "--record-size 8" + kKnobs, {5});  // N < P x L: some ranks have nothing
  expect_same("leaf.bin", "--record-size 8" + kKnobs, {3}); // N <= L: one leaf, spread
}

TEST_F(MpiCli, EmptyInputs) {
  expect_same("empty.bin", "--record-size 8" + kKnobs, {3});
  expect_same("empty.txt", kKnobs, {2});
}

TEST_F(MpiCli, LargeRecordsRoutedRecordByRecord) {
  // A chunk (64 records of 4 KiB) larger than the scatter's chunk memory:
  // the root's split is routed on every rank, its buckets' records tagged.
  const std::string arguments = "--record-size 4096 -S 600K --leaf-records 64 --fanout 4";
  expect_same("large.bin", arguments, {2, 3}, true);
  expect_routed("large.bin", "--record-size 4096 -S 64M --leaf-records 64 --fanout 4", 3, false);
}

TEST_F(MpiCli, HeavyTailedTextRoutedRecordByRecord) {
  // JSONL records of ~1 KB with a tail past 100 KB, chunks of 512 records
  // (~1.3 MB) at budgets of 1 and 4 MiB a rank: routed, and at 1 MiB the
  // buckets' leaves are larger than memory too (placed window by window).
  for (const char* budget : {"-S 1M", "-S 4M"}) {
    const std::string arguments = std::string(budget) + " --leaf-records 512 --fanout 8";
    expect_same("heavy.jsonl", arguments, {2, 3}, true);
  }
}

TEST_F(MpiCli, CsvWithQuotedNewlinesOnOneToFiveRanks) {
  expect_same("quoted.csv", kKnobs, {1, 2, 3, 4, 5});
}

TEST_F(MpiCli, CsvWhoseQuotesAParityCountWouldMisread) {
  // Literal quotes in unquoted fields, a quoted field across several ranks'
  // byte ranges, a last record without its newline.
  expect_same("tricky.csv", "--leaf-records 8 --fanout 4", {2, 3, 5});
}

TEST_F(MpiCli, LinesNulLinesAndJsonl) {
  expect_same("lines.txt", kKnobs, {2, 4});
  expect_same("zero.txt", "-z" + kKnobs, {3});
  expect_same("data.jsonl", kKnobs, {2, 5});
}

TEST_F(MpiCli, NpyArrays) {
  expect_same("array.npy", kKnobs, {3, 5});
}

TEST_F(MpiCli, HeadCount) {
  // K inside a bucket of a middle rank, past everything, and zero.
  expect_same("records.bin", "--record-size 8 -n 5000" + kKnobs, {3});
  expect_same("quoted.csv", "-n 1234" + kKnobs, {3, 4});
  expect_same("lines.txt", "-n 0" + kKnobs, {2});
  expect_same("data.jsonl", "-n 99999" + kKnobs, {2});
}

TEST_F(MpiCli, BudgetsAndThreadsDoNotChangeTheOutput) {
  expect_same("records.bin", "--record-size 8 -S 1M" + kKnobs, {2});
  expect_same("records.bin", "--record-size 8 -S 64M -j 2" + kKnobs, {3});
  expect_same("quoted.csv", "-S 1M" + kKnobs, {2});
}

TEST_F(MpiCli, AlignedInputsStayAligned) {
  const std::string a = (dir_ / "a.npy").string(), b = (dir_ / "b.npy").string();
  const std::string ra = (dir_ / "ra.npy").string(), rb = (dir_ / "rb.npy").string();
  ASSERT_EQ(run_single(input("array.npy") + " " + input("labels.npy") + " -o " + ra + " -o " + rb + " --seed 3 -q" +
                       kKnobs)
                .exit_code,
            0);
  const auto r =
      run_mpi(3, input("array.npy") + " " + input("labels.npy") + " -o " + a + " -o " + b + " --seed 3 -q -j 1" + kKnobs);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(same_bytes(ra, a));
  EXPECT_TRUE(same_bytes(rb, b));
  // numpy reads both, and row i of the shuffled array is still labelled i.
  const auto check = run_command("/usr/bin/python3 -c \"import numpy as np; x = np.load(\\\"" + a +
                                 "\\\"); y = np.load(\\\"" + b + "\\\"); assert (x[:, 0] == 3 * y).all(); "
                                 "assert sorted(y.tolist()) == list(range(4099))\"");
  EXPECT_EQ(check.exit_code, 0) << check.err;
}

// --stats: each rank's peak RSS within its -S and the usual 64 MiB
// allowance; the bytes the ranks send one another within 5% of the lower
// bound, the data times (P - 1) / P (each record's bucket is another rank's
// with probability (P - 1) / P; the hypergeometric spread of the matrix
// moves the total by about 1e-4 of it here, so the check cannot fail by
// chance); the counts a few bytes per round; each rank's own matrix draws
// (for its column sums) within its two boundary paths.
TEST_F(MpiCli, StatsShowTheCapTheLowerBoundAndTheDraws) {
  constexpr std::uint64_t kRecords = std::uint64_t{1} << 23;  // 64 MiB of 8-byte records
  std::string records(8 * kRecords, '\0');
  for (std::uint64_t i = 0; i < kRecords; ++i) std::memcpy(&records[8 * i], &i, 8);
  write_file(dir_ / "in.bin", records);
  constexpr std::uint64_t kBudget = std::uint64_t{24} << 20;
  const auto r = run_mpi(3, (dir_ / "in.bin").string() + " " + (dir_ / "out.bin").string() +
                                " --record-size 8 --seed 3 -S 24M -j 1 -q --stats --leaf-records 65536 --fanout 64");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::regex rank_line("RANK rank=([0-9]+) .*splits_drawn=([0-9]+) .*bytes_sent=([0-9]+) .*"
                             "count_bytes_sent=([0-9]+) .*peak_rss_bytes=([0-9]+)");
  std::uint64_t ranks = 0, sent = 0, counts = 0;
  for (auto it = std::sregex_iterator(r.err.begin(), r.err.end(), rank_line); it != std::sregex_iterator(); ++it) {
    ++ranks;
    EXPECT_LE(std::stoull((*it)[2]), 2u * 7) << "R = 128 chunks: paths of 7 splits";
    sent += std::stoull((*it)[3]);
    counts += std::stoull((*it)[4]);
    EXPECT_LE(std::stoull((*it)[5]), kBudget + (std::uint64_t{64} << 20)) << "rank " << (*it)[1];
  }
  EXPECT_EQ(ranks, 3u) << r.err;
  const double bound = 8.0 * kRecords * 2 / 3;
  EXPECT_GE(sent, 0.95 * bound);
  EXPECT_LE(sent, 1.05 * bound);
  EXPECT_LT(counts, sent / 1000);
}

// OpenMP threads wait passively on every rank unless the user says
// otherwise, as in extshuffle (FixedRecordsCli.OpenMpThreadsWaitPassivelyUnlessTold):
// each rank executes itself again before MPI starts, and libgomp, asked to
// show its settings, then spins 0 times; a spin count given is kept. The
// run's output is still the single-machine one.
TEST_F(MpiCli, OpenMpThreadsWaitPassivelyOnEveryRankUnlessTold) {
  const auto occurrences = [](const std::string& text, const std::string& word) {
    std::size_t count = 0;
    for (auto at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) ++count;
    return count;
  };
  const std::string reference = (dir_ / "reference").string(), output = (dir_ / "passive").string();
  const std::string arguments = " --seed 11 -q " + kKnobs + input("records.bin") + " ";
  ASSERT_EQ(run_single("--record-size 8" + arguments + reference).exit_code, 0);
  const std::string command = extshuffle_mpi_binary() + " --record-size 8 -T " + dir_.path().string() + arguments;
  // Launched as users launch it: the tests' other launches set the policy themselves (kPassiveWait).
  const auto by_default = run_command("OMP_DISPLAY_ENV=verbose " + on_ranks_as_launched_by_users(2, command + output));
  ASSERT_EQ(by_default.exit_code, 0) << by_default.err;
  EXPECT_EQ(occurrences(by_default.out + by_default.err, "GOMP_SPINCOUNT = '0'"), 2u) << by_default.out;
  EXPECT_TRUE(same_bytes(reference, output));
  const auto told =
      run_command("OMP_DISPLAY_ENV=verbose GOMP_SPINCOUNT=12345 " + on_ranks_as_launched_by_users(2, command + output));
  ASSERT_EQ(told.exit_code, 0) << told.err;
  EXPECT_EQ(occurrences(told.out + told.err, "GOMP_SPINCOUNT = '12345'"), 2u) << told.out;
  EXPECT_EQ(occurrences(told.out + told.err, "GOMP_SPINCOUNT = '0'"), 0u) << told.out;
}

// The commit renames a hidden file over the destination: a device, a pipe
// or a socket (here a FIFO, and a link to it) is refused before any work,
// and stays what it was. (A FIFO, not /dev/null: were the refusal missing,
// this test would replace a node of its own, not the machine's.)
TEST_F(MpiCli, ADeviceOrPipeAsDestinationIsRefusedAndLeftAlone) {
  const std::string fifo = (dir_ / "fifo").string(), link = (dir_ / "link").string();
  ASSERT_EQ(run_command("mkfifo " + fifo + " && ln -s " + fifo + " " + link).exit_code, 0);
  for (const std::string& destination : {fifo, link}) {
    for (const std::string& pieces : {std::string(), std::string(" --shards 1")}) {
      const auto r = run_mpi(2, input("lines.txt") + " -o " + destination + pieces + " --seed 1 </dev/null");
      EXPECT_EQ(r.exit_code, 2) << destination << pieces << ": " << r.err;
      EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
      EXPECT_NE(r.err.find("cannot be written in parts"), std::string::npos) << r.err;
      struct stat st {};
      ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
      EXPECT_TRUE(S_ISFIFO(st.st_mode)) << destination << pieces << ": the FIFO was replaced";
    }
  }
}

TEST_F(MpiCli, UsageErrorsAreOneLineAndExitTwo) {
  const std::string out = (dir_ / "out").string();
  for (const std::string& arguments :
       {std::string("- ") + out, input("lines.txt") + " -", input("lines.txt") + " " + out + " --skip-empty",
        input("lines.txt") + " " + out + " -n 3 --verify", std::string("-e a b c"),
        input("lines.txt") + " " + out + " --no-such-option", input("lines.txt") + " " + out + " --repeat",
        // A pseudo file is made as it is read: each rank would read other bytes.
        std::string("/proc/sys/kernel/random/uuid ") + out}) {
    const auto r = run_mpi(2, arguments + " </dev/null");
    EXPECT_EQ(r.exit_code, 2) << arguments << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << arguments << ": " << r.err;
    EXPECT_EQ(r.err.rfind("extshuffle-mpi: ", 0), 0u) << r.err;
  }
  const auto help = run_mpi(3, "--help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_EQ(help.out.find("Usage"), help.out.rfind("Usage")) << "printed once, by rank 0";
}

// extshuffle-mpi's own --help and --version: not extshuffle's word for
// word (which advertises -e, -i, --repeat... that it refuses) and not
// named extshuffle.
TEST(MpiCliHelp, HelpAndVersionAreItsOwn) {
  const auto version = run_mpi(1, "--version");
  EXPECT_EQ(version.exit_code, 0) << version.err;
  EXPECT_EQ(version.out.rfind("extshuffle-mpi ", 0), 0u) << version.out;
  const auto help = run_mpi(1, "--help");
  EXPECT_EQ(help.exit_code, 0) << help.err;
  EXPECT_NE(help.out.find("MPI"), std::string::npos) << help.out;
  // No option line of its own for what it refuses (the footer names them as extshuffle's).
  for (const char* refused : {"\n  -i,--input-range", "\n  --skip-empty", "\n  -r,--repeat"}) {
    EXPECT_EQ(help.out.find(refused), std::string::npos) << refused;
  }
  EXPECT_DIFFERENT_BYTES(run_single("--help").out, help.out);
}

}  // namespace
}  // namespace extshuffle::testing::mpi_cli_test
