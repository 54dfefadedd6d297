// Failures of one rank end the whole job the way a failure ends extshuffle
// (docs/reliability.md): one line naming the rank and the cause, the
// destination untouched, no scratch file and no partial output left. The
// faults are real: the fault shim (tests/reliability/fault_shim.c) preloaded
// into one rank only makes its scratch writes fail, or holds one of them
// while the test kills that rank with SIGKILL. Also: a partial output left
// by a killed job is removed by the next run, and one a live job holds is
// left alone.
#include <gtest/gtest.h>
#include <sys/file.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "mpi_support.hpp"

namespace extshuffle::testing::mpi_failure_test {
namespace {

namespace fs = std::filesystem;

const std::string kOld = "the previous output, which must survive\n";

class MpiFailure : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(dir_ / "scratch");
    fs::create_directories(dir_ / "out");
    // 2^18 8-byte records (2 MiB): at -S 4M with L = 4096 and F = 16 every
    // rank writes scratch space for a while.
    std::string records(8 << 18, '\0');
    for (std::size_t i = 0; i < records.size() / 8; ++i) std::memcpy(&records[8 * i], &i, 8);
    write_file(input(), records);
    write_file(destination(), kOld);
  }
  std::string input() const { return (dir_ / "in.bin").string(); }
  std::string destination() const { return (dir_ / "out" / "shuffled.bin").string(); }
  // The partial outputs beside the destination (shared_output.hpp's
  // ".shuffled.bin.extshuffle-<16 hex digits>", or an earlier version's
  // ".shuffled.bin.extshuffle-mpi-partial").
  std::vector<std::string> partials() const {
    std::vector<std::string> found;
    for (const auto& entry : fs::directory_iterator(dir_ / "out")) {
      const std::string name = entry.path().filename().string();
      if (name.rfind(".shuffled.bin.extshuffle-", 0) == 0) found.push_back(name);
    }
    return found;
  }
  fs::path partial(const std::string& suffix) const { return dir_ / "out" / (".shuffled.bin.extshuffle-" + suffix); }
  static std::string options() { return " --record-size 8 --seed 5 -q --leaf-records 4096 --fanout 16 "; }
  std::string arguments() const {
    return input() + " " + destination() + options() + "-S 4M -j 1 -T " + (dir_ / "scratch").string();
  }
  // extshuffle-mpi on `ranks` ranks, rank `faulty` with the fault shim set
  // to `fault` on its scratch files; its process id goes to pid_file.
  std::string with_fault_in_rank(int ranks, int faulty, const std::string& fault, bool mpirun_messages) const {
    const fs::path wrapper = dir_ / "fault_in_one_rank.sh";
    write_file(wrapper, "#!/bin/bash\nif [ \"$OMPI_COMM_WORLD_RANK\" = " + std::to_string(faulty) +
                            " ]; then\n  export LD_PRELOAD=" + kFaultShim + " EXTSHUFFLE_FAULT=" + fault +
                            " EXTSHUFFLE_FAULT_PATH=" + (dir_ / "scratch").string() +
                            "/ EXTSHUFFLE_FAULT_AFTER_BYTES=300000 EXTSHUFFLE_FAULT_MARKER=" + marker() +
                            " EXTSHUFFLE_FAULT_RELEASE=" + (dir_ / "release").string() + "\n  echo $$ > " +
                            pid_file() + "\nfi\nexec \"$@\"\n");
    fs::permissions(wrapper, fs::perms::owner_all);
    return on_ranks(ranks, wrapper.string() + " " + extshuffle_mpi_binary() + " " + arguments(), mpirun_messages);
  }
  std::string marker() const { return (dir_ / "marker").string(); }
  std::string pid_file() const { return (dir_ / "rank.pid").string(); }
  void expect_nothing_left() const {
    EXPECT_SAME_BYTES(read_file(destination()), kOld);
    EXPECT_TRUE(partials().empty()) << partials().front();
    EXPECT_TRUE(fs::is_empty(dir_ / "scratch")) << "scratch files left";
  }

  TempDir dir_;
  const std::string kFaultShim = from_environment("EXTSHUFFLE_FAULT_SHIM", EXTSHUFFLE_FAULT_SHIM);
};

TEST_F(MpiFailure, AFullScratchDiskOnOneRankFailsTheJobNamingIt) {
  const auto r = run_command(with_fault_in_rank(3, 1, "enospc", false));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  ASSERT_TRUE(fs::exists(marker())) << "the fault never fired";
  EXPECT_NE(r.err.find("extshuffle-mpi: rank 1: cannot write scratch file"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("No space left on device"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  expect_nothing_left();
}

TEST_F(MpiFailure, ARankKilledMidRunLeavesNothingAndTheNextRunSucceeds) {
  auto job = std::async(std::launch::async, [&] { return run_command(with_fault_in_rank(3, 2, "pause-write", true)); });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!fs::exists(marker()) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_TRUE(fs::exists(marker())) << "rank 2 never paused";
  EXPECT_EQ(partials().size(), 1u) << "the run was under way";
  const int pid = std::stoi(read_file(pid_file()));
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  const auto r = job.get();
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("rank 2"), std::string::npos) << "mpirun names the killed rank: " << r.err;
  EXPECT_SAME_BYTES(read_file(destination()), kOld);
  EXPECT_TRUE(fs::is_empty(dir_ / "scratch")) << "scratch files left";
  // The others were stopped by SIGTERM and removed the partial output; had
  // they been killed too, the next run would remove it.
  const auto again = run_mpi(3, arguments());
  ASSERT_EQ(again.exit_code, 0) << again.err;
  const std::string reference = (dir_ / "reference").string();
  ASSERT_EQ(run_single(input() + " " + reference + options()).exit_code, 0);
  EXPECT_TRUE(same_bytes(reference, destination()));
  EXPECT_TRUE(partials().empty());
}

TEST_F(MpiFailure, APartialOutputLeftByAKilledJobIsRemoved) {
  write_file(partial("0123456789abcdef"), "what a job killed by SIGKILL on every rank left behind");
  write_file(partial("mpi-partial"), "what an earlier version's killed job left behind");
  const auto r = run_mpi(2, arguments());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(partials().empty()) << partials().front();
  EXPECT_EQ(fs::file_size(destination()), 8u << 18);
}

// A second job into the destination of a running one writes a partial
// output of its own and commits under the commit's lock, as extshuffle
// does: the running job's file (locked) is neither taken over nor removed.
TEST_F(MpiFailure, APartialOutputALiveJobHoldsIsLeftAlone) {
  const fs::path held_path = partial("00000000deadbeef");
  write_file(held_path, "a running job's");
  const int held = ::open(held_path.c_str(), O_RDWR);
  ASSERT_GE(held, 0);
  ASSERT_EQ(::flock(held, LOCK_EX), 0);  // as rank 0 of a running job holds it
  const auto r = run_mpi(2, arguments());
  ::close(held);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_SAME_BYTES(read_file(held_path), "a running job's");
  EXPECT_EQ(partials(), std::vector<std::string>{held_path.filename().string()});
  const std::string reference = (dir_ / "reference").string();
  ASSERT_EQ(run_single(input() + " " + reference + options()).exit_code, 0);
  EXPECT_TRUE(same_bytes(reference, destination()));
}

TEST_F(MpiFailure, BadInputIsTheSingleMachineMessageNamingTheRank) {
  const std::string bad = (dir_ / "bad.csv").string();
  write_file(bad, "a,b\n1,x\n2,\"never closed\n3,y\n");
  const auto single = run_single(bad + " " + destination() + " --seed 1");
  const auto r = run_mpi(3, bad + " " + destination() + " --seed 1");
  EXPECT_EQ(single.exit_code, 1);
  EXPECT_EQ(r.exit_code, 1);
  const std::string cause = single.err.substr(std::string("extshuffle: ").size());
  EXPECT_EQ(r.err, "extshuffle-mpi: rank 0: " + cause);
  EXPECT_SAME_BYTES(read_file(destination()), kOld);
  EXPECT_TRUE(partials().empty());
}

}  // namespace
}  // namespace extshuffle::testing::mpi_failure_test
