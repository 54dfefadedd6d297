// extshuffle-mpi --checkpoint DIR (docs/mpi.md "A killed job") killed at
// random moments of both passes under real mpirun on 3 ranks over TCP: the
// fault shim holds rank R's write into its DIR/rank-R/scratch-0 (pass 1)
// or into its range (pass 2) past K bytes, R and K drawn from a printed
// seed, and the job is killed then; each rerun's outputs are extshuffle's
// byte for byte and DIR is empty after. Fixed-size records and
// heavy-tailed JSONL at 2 levels, one moment a case in CI (four mpirun
// launches); $EXTSHUFFLE_CHECKPOINT_MOMENTS a case at 2 and 3 levels and
// for a tar dataset and JSONL in pieces cut by bytes (--shard-size) in the
// sweep (scripts/mpi_checkpoint_sweep.sh).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "mpi_checkpoint_support.hpp"
#include "support/tar_archives.hpp"
#include "support/text_records.hpp"

namespace extshuffle::testing::mpi_checkpoint_moments_test {
namespace {

using namespace mpi_checkpoint;

// A case of the random moments: its input, the job's options and
// extshuffle's (into ref/), the outputs.
struct MomentCase {
  std::string name, input_name, input, options, reference_options;
  std::vector<std::string> outputs;
  std::string python_maker = {};  // else `input`: a script that writes the input directory (argv[1])
};

// The moments' seed: $EXTSHUFFLE_CHECKPOINT_SEED, else a fresh one (printed
// either way, to run a failure again); how many a case takes:
// $EXTSHUFFLE_CHECKPOINT_MOMENTS, else `ci`.
std::uint64_t moments_seed() {
  const char* value = std::getenv("EXTSHUFFLE_CHECKPOINT_SEED");
  return value != nullptr && *value != '\0' ? std::stoull(value) : std::random_device{}();
}
int moments(int ci) {
  const char* value = std::getenv("EXTSHUFFLE_CHECKPOINT_MOMENTS");
  return value != nullptr && *value != '\0' ? std::atoi(value) : ci;
}

class MpiCheckpointMoments : public MpiCheckpoint {
 protected:
  // Kills at `count` moments drawn from `seed`, alternately (from the seed's
  // parity) in pass 1 (the
  // K-th byte rank R receives into DIR/rank-R/scratch-0) and pass 2 (the
  // K-th byte of its range it writes), R and K uniform (K below a third of
  // the input's bytes: a moment past what the rank writes lets the job run
  // through); each run resumed until it succeeds must write extshuffle's
  // outputs and leave DIR empty.
  void kill_at_random_moments(const MomentCase& c, std::uint64_t seed, int count) {
    fs::remove_all(base_ / "ck");
    std::uint64_t input_bytes = c.input.size();
    if (c.python_maker.empty()) {
      write_file(base_ / c.input_name, c.input);
    } else {
      fs::create_directories(base_ / c.input_name);
      write_file(base_ / "make.py", c.python_maker);
      const auto made = run_command("cd " + base_.string() + " && /usr/bin/python3 make.py " + c.input_name);
      ASSERT_EQ(made.exit_code, 0) << made.err;
      for (const auto& entry : fs::directory_iterator(base_ / c.input_name)) input_bytes += entry.file_size();
    }
    options_ = c.options;
    fs::remove_all(base_ / "ref");
    fs::create_directories(base_ / "ref");
    const auto reference =
        run_command("cd " + base_.string() + " && " + extshuffle_binary() + " " + c.reference_options);
    ASSERT_EQ(reference.exit_code, 0) << reference.err;
    std::vector<std::string> outputs = c.outputs;  // none named: what extshuffle wrote (pieces cut by bytes)
    for (const auto& entry : fs::directory_iterator(base_ / "ref")) {
      if (c.outputs.empty()) outputs.push_back(entry.path().filename().string());
    }
    ASSERT_FALSE(outputs.empty());
    std::mt19937_64 draw(seed);
    const std::uint64_t share = input_bytes / kRanks;
    for (int m = 0; m < count; ++m) {
      const int rank = static_cast<int>(draw() % kRanks);
      const std::uint64_t k = draw() % share;
      const std::string where = (m + seed) % 2 == 0 ? "ck/rank-" + std::to_string(rank) + "/scratch-0" : "out/";
      const std::string moment = c.name + ": rank " + std::to_string(rank) + "'s byte " + std::to_string(k) + " into " +
                                 where + " (seed " + std::to_string(seed) + ")";
      std::printf("checkpoint moment | %s\n", moment.c_str());
      std::fflush(stdout);
      fs::remove(base_ / "marker");
      kill_when_paused(faulty_job(kRanks, "pause-write", where, rank, "marker", k), "marker");
      if (fs::exists(base_ / "marker")) {
        const auto resumed = run_command(job(kRanks));
        ASSERT_EQ(resumed.exit_code, 0) << moment << ": " << resumed.err;
        // How the rerun went on (its -v lines), for the sweep's record.
        std::istringstream lines(resumed.err);
        for (std::string line; std::getline(lines, line);) {
          if (line.find("checkpoint: dataset") != std::string::npos)
            std::printf("checkpoint resumed | %s\n", line.c_str());
        }
        std::fflush(stdout);
      } else {
        EXPECT_NE(read_file(base_ / "killed.err").find("checkpoint"), std::string::npos)
            << moment << ": ran through without its -v lines: " << read_file(base_ / "killed.err");
      }
      for (const std::string& name : outputs) {
        EXPECT_TRUE(same_bytes((base_ / "out" / name).string(), (base_ / "ref" / name).string()))
            << moment << ": " << name;
      }
      EXPECT_TRUE(fs::is_empty(base_ / "ck")) << moment << ": " << run_command("ls -AR " + (base_ / "ck").string()).out;
    }
  }
};

// Fixed-size records cut into 3 pieces (1.6 MB), and heavy-tailed JSONL to
// one file (1.8 MB), each at 2 levels of about 32 buckets (3 levels too in
// the sweep, scripts/mpi_checkpoint_sweep.sh), -S 640K: one moment a case
// in CI (the cases' seeds differ by one: one moment in each pass), four
// launches.
TEST_F(MpiCheckpointMoments, KillsAtRandomMomentsOfBothPassesResumeToTheSameBytes) {
  const std::uint64_t seed = moments_seed();
  std::printf("checkpoint moments: seed %llu\n", static_cast<unsigned long long>(seed));
  const std::string fixed = "records.bin -o {out}/p-{shard}.bin --record-size 8 --shards 3 --seed 11 ";
  const std::string jsonl = "docs.jsonl -o {out}/out.jsonl --seed 12 ";
  const std::vector<std::string> pieces{"p-00000.bin", "p-00001.bin", "p-00002.bin"};
  std::vector<std::pair<std::string, std::string>> plans{{"2 levels", "--leaf-records 6000"}};
  std::vector<std::pair<std::string, std::string>> jsonl_plans{{"2 levels", "--leaf-records 80"}};
  if (std::getenv("EXTSHUFFLE_CHECKPOINT_MOMENTS") != nullptr) {
    plans.emplace_back("3 levels", "--leaf-records 1000 --fanout 16");
    jsonl_plans.emplace_back("3 levels", "--leaf-records 40 --fanout 8");
  }
  // The options with {out} as `out`.
  const auto at = [](std::string options, const std::string& out) {
    return options.replace(options.find("{out}"), 5, out);
  };
  std::vector<MomentCase> cases;
  for (const auto& [levels, knobs] : plans) {
    cases.push_back({"fixed, " + levels, "records.bin", numbered_u64(200000), at(fixed, "out") + knobs + " -S 640K -v",
                     at(fixed, "ref") + knobs, pieces});
  }
  for (const auto& [levels, knobs] : jsonl_plans) {
    cases.push_back({"JSONL, " + levels,
                     "docs.jsonl",
                     heavy_jsonl(2500, 7),
                     at(jsonl, "out") + knobs + " -S 640K -v",
                     at(jsonl, "ref") + knobs,
                     {"out.jsonl"}});
  }
  if (std::getenv("EXTSHUFFLE_CHECKPOINT_MOMENTS") != nullptr) {
    // Pieces cut by bytes: the exchange's points count, step 4 starts over.
    const std::string cut = "docs.jsonl -o {out}/s-{shard}.jsonl --shard-size 300K --seed 12 --leaf-records 80 ";
    cases.push_back({"JSONL --shard-size, 2 levels",
                     "docs.jsonl",
                     heavy_jsonl(2500, 7),
                     at(cut, "out") + " -S 640K -v",
                     at(cut, "ref"),
                     {}});
  }
  if (std::getenv("EXTSHUFFLE_CHECKPOINT_MOMENTS") != nullptr &&
      run_command("test -x /usr/bin/python3").exit_code == 0) {
    const std::string tar =
        "tars -o {out}/{split}-{shard}.tar --format tar --split train=0.8,test=rest --shards 2 --seed 13 "
        "--leaf-records 256 --fanout 8";
    cases.push_back({"tar dataset, 3 levels",
                     "tars",
                     "",
                     at(tar, "out") + " -S 640K -v",
                     at(tar, "ref"),
                     {"train-00000.tar", "train-00001.tar", "test-00000.tar", "test-00001.tar"},
                     kTwoTarShardsPython});
  }
  for (std::size_t k = 0; k < cases.size(); ++k) kill_at_random_moments(cases[k], seed + k, moments(1));
}

}  // namespace
}  // namespace extshuffle::testing::mpi_checkpoint_moments_test
