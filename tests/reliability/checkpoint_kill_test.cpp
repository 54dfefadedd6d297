// --checkpoint DIR against kills and failures of the real binary (docs/cli.md
// "Resuming a run", docs/reliability.md "Killed and resumed"): each run is
// killed, or has a system call fail, at a moment drawn at random among the
// events of the run (the K-th write, fdatasync, pwrite or rename of a
// thread, as strace counts and injects them; or kill -9 sent while the
// fault shim holds a write to DIR past a drawn byte count), across both
// passes; then the same command runs again. Each time the resumed run's
// files are byte for byte those of an uninterrupted run without
// --checkpoint, DIR holds no file after it and no temporary is left beside
// the outputs. Cases: fixed-size records and heavy-tailed JSONL at two and
// three levels of the plan (--leaf-records/--fanout), a sharded and split
// tar dataset with a manifest. A few moments a case in CI;
// $EXTSHUFFLE_CHECKPOINT_MOMENTS moments a case and kind for the sweep
// (scripts/checkpoint_sweep.sh), which prints one line a moment.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "checkpoint_run.hpp"
#include "reliability_support.hpp"
#include "support/command.hpp"
#include "support/tar_archives.hpp"
#include "support/text_records.hpp"

namespace extshuffle::testing::checkpoint_kill_test {
namespace {

using namespace checkpoint_run;

// Kills and failures at drawn moments: the K-th call of one thread, K
// uniform in what an uninterrupted checkpointed run makes; kill -9 sent
// while the shim holds the first write to DIR past a drawn byte count.
void sweep(CheckpointRun& run, const Case& c, std::uint64_t seed) {
  run.reference();
  const std::map<std::string, int> most = run.count_events();
  std::mt19937_64 draw(seed);
  const std::vector<std::pair<std::string, std::string>> kinds{
      {"write", "signal=KILL"}, {"fdatasync", "signal=KILL"}, {"renameat", "signal=KILL"},  {"fdatasync", "error=EIO"},
      {"write", "error=EIO"},   {"write", "error=ENOSPC"},    {"pwrite64", "error=ENOSPC"}, {"renameat", "error=EIO"}};
  std::vector<std::string> table;
  // CI: `ci_moments` moments, each of the next kind in turn from one the
  // seed picks; the sweep: every kind at each of its moments.
  const bool sweeping = std::getenv("EXTSHUFFLE_CHECKPOINT_MOMENTS") != nullptr;
  std::size_t next_kind = draw() % kinds.size();
  for (int m = 0; m < moments(c.ci_moments); ++m) {
    for (std::size_t i = 0; i < (sweeping ? kinds.size() : 1); ++i) {
      const auto& [call, effect] = kinds[sweeping ? i : next_kind++ % kinds.size()];
      const int calls = most.count(call) ? most.at(call) : 0;
      if (calls == 0) continue;
      const int k = 1 + static_cast<int>(draw() % static_cast<std::uint64_t>(calls));
      const std::string inject = call + ":" + effect + ":when=" + std::to_string(k);
      table.push_back(run.kill_and_resume(
          inject, strace_command() + " -f -qq -o /dev/null -e trace=" + call + " -e inject=" + inject));
    }
  }
  for (const std::string& line : table) std::printf("checkpoint moment | %s\n", line.c_str());
}

TEST(CheckpointKill, FixedRecordsTwoAndThreeLevels) {
  if (!have("strace")) GTEST_SKIP() << "strace is not installed";
  TempDir root;
  for (const auto& [levels, records] : {std::pair{2, 20000}, std::pair{3, 60000}}) {
    const Case c{"fixed, " + std::to_string(levels) + " levels",
                 "{in}/records.bin {out}/out.bin --record-size 8 --seed 11 -S 64K --leaf-records 1024 --fanout 32",
                 {"out.bin"}};
    CheckpointRun run(c, root.path() / std::to_string(levels));
    write_file(run.in() / "records.bin", numbered_u64(records));
    sweep(run, c, 100 + levels);
  }
}

TEST(CheckpointKill, HeavyTailedJsonlTwoAndThreeLevels) {
  if (!have("strace")) GTEST_SKIP() << "strace is not installed";
  TempDir root;
  for (const auto& [levels, knobs] :
       {std::pair{2, "--leaf-records 1024 --fanout 16"}, std::pair{3, "--leaf-records 256 --fanout 8"}}) {
    const Case c{"JSONL, " + std::to_string(levels) + " levels",
                 std::string("{in}/docs.jsonl {out}/out.jsonl --seed 12 -S 1M ") + knobs,
                 {"out.jsonl"}};
    CheckpointRun run(c, root.path() / std::to_string(levels));
    write_file(run.in() / "docs.jsonl", heavy_jsonl(5000, 7));
    sweep(run, c, 200 + levels);
  }
}

// Two tar shards in a directory, shuffled by sample into splits cut into
// shards, with a manifest: every piece and the manifest as the
// uninterrupted run writes them.
TEST(CheckpointKill, ShardedSplitTarDatasetWithManifest) {
  if (!have("strace")) GTEST_SKIP() << "strace is not installed";
  if (!have("/usr/bin/python3")) GTEST_SKIP() << "python3 is not installed (it writes the tar input)";
  TempDir root;
  const Case c{"tar dataset",
               "{in} -o {out}/{split}-{shard}.tar --format tar --split train=0.8,test=rest --shards 2 "
               "--manifest {out}/manifest.json --seed 13 -S 2M --leaf-records 256 --fanout 8",
               {"train-00000.tar", "train-00001.tar", "test-00000.tar", "test-00001.tar", "manifest.json"}};
  CheckpointRun run(c, root.path());
  const std::string script = kTwoTarShardsPython;
  write_file(root / "make.py", script);
  const CommandResult made =
      run_command("/usr/bin/python3 " + quoted((root / "make.py").string()) + " " + quoted(run.in().string()));
  ASSERT_EQ(made.exit_code, 0) << made.err;
  sweep(run, c, 300);
}

// kill -9 from outside, sent once the fault shim holds the first write
// into DIR past a drawn byte count (fixed-size records, three levels).
TEST(CheckpointKill, KillNineWhileAWriteIsHeld) {
  TempDir root;
  const Case c{"fixed, kill -9",
               "{in}/records.bin {out}/out.bin --record-size 8 --seed 14 -S 64K --leaf-records 1024 --fanout 32",
               {"out.bin"}};
  CheckpointRun run(c, root.path());
  write_file(run.in() / "records.bin", numbered_u64(60000));
  run.reference();
  std::mt19937_64 draw(400);
  Workspace w;
  for (int m = 0; m < moments(2); ++m) {
    // Pass 1 writes the records' bytes into DIR, pass 2 into the output.
    const bool pass_two = m % 2 == 1;
    const std::uint64_t after = draw() % (60000 * 8);
    std::filesystem::remove(w.marker());
    run.fresh();
    const fs::path where = pass_two ? run.output_directory() : run.checkpoint_directory();
    Child child(run.arguments(true, "-q"), fault_environment("pause-write", where.string(), after, w), w.capture_dir);
    // The shim's pause is the event: the run is killed while a write is held.
    const bool held = wait_for_file_while(w.marker(), child);
    if (held) child.send(SIGKILL);
    const int exit_code = child.wait();
    const std::string kind =
        "kill -9 after " + std::to_string(after) + " bytes into " + (pass_two ? "the output" : "DIR");
    std::printf("checkpoint moment | %s\n", run.resume(kind, exit_code, child.err()).c_str());
  }
}

}  // namespace
}  // namespace extshuffle::testing::checkpoint_kill_test
