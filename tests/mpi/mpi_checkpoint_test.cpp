// extshuffle-mpi --checkpoint DIR (docs/mpi.md "A killed job"), under real
// mpirun on 3 ranks over TCP, each rank with its own -T: a job killed
// (SIGKILL to every process of its session) at moments chosen by events,
// never by time (the fault shim holds a rank's first write into a chosen
// directory, and the test kills the job once its marker is there); each
// rerun resumes from the point every rank made durable (its -v line says
// which), and its pieces are extshuffle's byte for byte; a rerun on 2
// ranks is refused with one line and exit 2, every file of DIR left as it
// was; a received bucket damaged on its disk is found by its checksum; a
// second job on a DIR in use is refused; DIR holds no file after success.
// Eight mpirun launches.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>

#include "mpi_support.hpp"

namespace extshuffle::testing::mpi_checkpoint_test {
namespace {

namespace fs = std::filesystem;

constexpr int kRanks = 3;
constexpr const char* kOptions =
    "in.txt -o out/p-{shard}.txt --shards 3 --manifest man/m.json --seed 5 --leaf-records 700 -v";

// Lines of heavy-tailed lengths (a few long ones among short ones).
std::string heavy_tailed_lines(int count) {
  std::string text;
  for (int i = 0; i < count; ++i) {
    const int width = i % 97 == 0 ? 900 : i % 13 == 0 ? 80 : 6;
    text += std::to_string(i) + std::string(static_cast<std::size_t>(width), static_cast<char>('a' + i % 26)) + "\n";
  }
  return text;
}

// Every file under `root` (a directory included as its name) with its bytes.
std::map<std::string, std::string> tree(const fs::path& root) {
  std::map<std::string, std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    files[fs::relative(entry.path(), root).string()] = entry.is_regular_file() ? read_file(entry.path()) : "<dir>";
  }
  return files;
}

class MpiCheckpoint : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = fs::canonical(dir_.path());
    write_file(base_ / "in.txt", heavy_tailed_lines(20000));
    for (const char* sub : {"out", "man", "ref"}) fs::create_directories(base_ / sub);
  }
  // The job on `ranks` ranks with --checkpoint ck, each rank its own -T;
  // rank `paused` under the fault shim's pause-write of the files whose
  // paths start with `pause_prefix` (none when empty), whose marker is
  // `marker`.
  std::string job(int ranks, const std::string& pause_prefix = "", int paused = 0, const std::string& marker = "") {
    const std::string scratch = (base_ / "scratch" / "rank-").string() + "\\$OMPI_COMM_WORLD_RANK";
    const std::string bin = extshuffle_mpi_binary() + " " + kOptions + " --checkpoint ck -T " + scratch;
    std::string each = "mkdir -p " + scratch + " && ";
    if (pause_prefix.empty()) {
      each += "exec " + bin;
    } else {
      const std::string shim =
          "env LD_PRELOAD=" + from_environment("EXTSHUFFLE_FAULT_SHIM", EXTSHUFFLE_FAULT_SHIM) +
          " EXTSHUFFLE_FAULT=pause-write EXTSHUFFLE_FAULT_PATH=" + (base_ / pause_prefix).string() +
          " EXTSHUFFLE_FAULT_MARKER=" + (base_ / marker).string() +
          " EXTSHUFFLE_FAULT_RELEASE=" + (base_ / "never").string();
      each += "if [ \\$OMPI_COMM_WORLD_RANK = " + std::to_string(paused) + " ]; then exec " + shim + " " + bin +
              "; else exec " + bin + "; fi";
    }
    return "cd " + base_.string() + " && " + on_ranks(ranks, "sh -c \"" + each + "\"");
  }
  // Runs `command` in a session of its own and, once `marker` exists (the
  // fault shim paused a rank), runs `meanwhile` (its stderr and exit code
  // in meanwhile.err, meanwhile.rc), then kills every process of that
  // session.
  CommandResult kill_when_paused(const std::string& command, const std::string& marker,
                                 const std::string& meanwhile = "true") {
    write_file(base_ / "job.sh", command + "\n");
    write_file(base_ / "meanwhile.sh", meanwhile + "\n");
    const std::string script = "cd " + base_.string() + " && (setsid sh job.sh > killed.err 2>&1 & pid=$!; " +
                               "for i in $(seq 1200); do [ -e " + marker +
                               " ] && break; kill -0 $pid 2>/dev/null || break; sleep 0.1; done; "
                               "sh meanwhile.sh 2> meanwhile.err; echo $? > meanwhile.rc; "
                               "pkill -KILL -s $pid; wait $pid; exit 0)";
    return run_command(script);
  }
  // The pieces are extshuffle's byte for byte; the manifest is there; DIR,
  // the output's and the manifest's directories hold nothing else.
  void expect_extshuffles_pieces_and_nothing_left() {
    const auto reference = run_command("cd " + base_.string() + " && " + extshuffle_binary() +
                                       " in.txt -o ref/p-{shard}.txt --shards 3 --seed 5 --leaf-records 700");
    ASSERT_EQ(reference.exit_code, 0) << reference.err;
    for (const std::string piece : {"p-00000.txt", "p-00001.txt", "p-00002.txt"}) {
      EXPECT_TRUE(same_bytes((base_ / "out" / piece).string(), (base_ / "ref" / piece).string())) << piece;
    }
    EXPECT_TRUE(fs::is_empty(base_ / "ck")) << run_command("ls -AR " + (base_ / "ck").string()).out;
    EXPECT_EQ(run_command("ls -A " + (base_ / "out").string()).out, "p-00000.txt\np-00001.txt\np-00002.txt\n");
    EXPECT_EQ(run_command("ls -A " + (base_ / "man").string()).out, "m.json\n");
  }
  TempDir dir_;
  fs::path base_;
};

// A job killed during its exchange (the fault shim holds rank 1's first
// write into its DIR/rank-1/scratch-0) runs again from the start; killed
// again once every rank journalled its exchange (rank 1's first write of
// its range), a rerun on 2 ranks is refused, one with a damaged bucket
// fails, and the rerun on 3 resumes after the exchange.
TEST_F(MpiCheckpoint, AKilledJobResumesAfterTheExchangeAndAnotherPIsRefused) {
  kill_when_paused(job(kRanks, "ck/rank-1/scratch-0", 1, "marker-1"), "marker-1");
  ASSERT_TRUE(fs::exists(base_ / "marker-1")) << "rank 1 never received a bucket: " << read_file(base_ / "killed.err");
  for (int rank = 0; rank < kRanks; ++rank) {
    EXPECT_TRUE(fs::exists(base_ / "ck" / ("rank-" + std::to_string(rank)) / "journal")) << rank;
  }
  kill_when_paused(job(kRanks, "out/", 1, "marker-2"), "marker-2");
  ASSERT_TRUE(fs::exists(base_ / "marker-2")) << "rank 1 never wrote its range: " << read_file(base_ / "killed.err");
  EXPECT_FALSE(fs::exists(base_ / "out" / "p-00000.txt"));

  // Another P: one line, exit 2, DIR as it was.
  const auto before = tree(base_ / "ck");
  const auto refused = run_command(job(2));
  EXPECT_EQ(refused.exit_code, 2) << refused.err;
  // One line, besides the warning every run with --leaf-records prints.
  const std::string warning = "extshuffle-mpi: --leaf-records/--fanout change the permutation";
  EXPECT_EQ(std::count(refused.err.begin(), refused.err.end(), '\n'), 2) << refused.err;
  EXPECT_EQ(refused.err.rfind(warning, 0), 0u) << refused.err;
  EXPECT_NE(refused.err.find("holds the checkpoint of a job of 3 ranks, this job has 2"), std::string::npos)
      << refused.err;
  EXPECT_TRUE(tree(base_ / "ck") == before) << "DIR's files were changed by the refused job";

  // A received bucket damaged on its disk is found by its checksum: exit 1,
  // nothing published; undamaged again, the rerun resumes.
  const fs::path scratch = base_ / "ck" / "rank-1" / "scratch-0";
  std::string bytes = read_file(scratch);
  ASSERT_FALSE(bytes.empty());
  bytes[0] = static_cast<char>(bytes[0] ^ 0x20);
  write_file(scratch, bytes);
  const auto damaged = run_command(job(kRanks));
  EXPECT_EQ(damaged.exit_code, 1) << damaged.err;
  EXPECT_NE(damaged.err.find("fails its checksum"), std::string::npos) << damaged.err;
  EXPECT_FALSE(fs::exists(base_ / "out" / "p-00000.txt"));
  bytes[0] = static_cast<char>(bytes[0] ^ 0x20);
  write_file(scratch, bytes);

  const auto resumed = run_command(job(kRanks));
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_NE(resumed.err.find("resumed after the exchange"), std::string::npos) << resumed.err;
  expect_extshuffles_pieces_and_nothing_left();
}

// A job killed at its commit (the fault shim holds rank 0's first write of
// the manifest, which comes once every rank journalled its range as
// placed): the rerun commits only. While it is held, a second job on the
// same DIR is refused (each DIR/rank-R's own lock), before any work.
TEST_F(MpiCheckpoint, AJobKilledAtItsCommitCommitsOnlyAndASecondJobIsRefused) {
  kill_when_paused(job(kRanks, "man/", 0, "marker"), "marker", job(kRanks));
  ASSERT_TRUE(fs::exists(base_ / "marker")) << "the job never reached the commit: " << read_file(base_ / "killed.err");
  const std::string second = read_file(base_ / "meanwhile.err");
  EXPECT_EQ(read_file(base_ / "meanwhile.rc"), "1\n") << second;
  EXPECT_NE(second.find("in use by another run"), std::string::npos) << second;
  EXPECT_FALSE(fs::exists(base_ / "out" / "p-00000.txt"));
  const auto resumed = run_command(job(kRanks));
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_NE(resumed.err.find("only the commit was left"), std::string::npos) << resumed.err;
  expect_extshuffles_pieces_and_nothing_left();
}

}  // namespace
}  // namespace extshuffle::testing::mpi_checkpoint_test
