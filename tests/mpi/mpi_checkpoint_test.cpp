// extshuffle-mpi --checkpoint DIR (docs/mpi.md "A killed job"), under real
// mpirun on 3 ranks over TCP, each rank with its own -T: a job killed
// (SIGKILL to every process of its session) at moments chosen by events,
// never by time (the fault shim holds a rank's write into a chosen file
// past a byte count, and the test kills the job once its marker is there);
// each rerun resumes from the point every rank made durable, and a rank's
// step 4 from its own last *bucket j written* (its -v line says which), and
// its pieces are extshuffle's byte for byte; a rerun on 2 ranks is refused
// with one line and exit 2, every file of DIR left as it was; a received
// bucket damaged on its disk is found by its checksum; a rank's journal
// damaged in its middle ends the job, torn in its last record resumes from
// the record before; a full disk while a rank journals ends the job
// cleanly; a second job on a DIR in use is refused; DIR holds no file after
// success (kills at random moments: mpi_checkpoint_moments_test.cpp).
// Twenty mpirun launches.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "mpi_checkpoint_support.hpp"

namespace extshuffle::testing::mpi_checkpoint_test {
namespace {

using namespace mpi_checkpoint;

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
  flip_first_byte(scratch);
  const auto damaged = run_command(job(kRanks));
  EXPECT_EQ(damaged.exit_code, 1) << damaged.err;
  EXPECT_NE(damaged.err.find("fails its checksum"), std::string::npos) << damaged.err;
  EXPECT_FALSE(fs::exists(base_ / "out" / "p-00000.txt"));
  flip_first_byte(scratch);

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

// Heavy-tailed lines (2 MB) to one output file, each rank's range written
// in place: 31 buckets of 2 levels, about 10 a rank; -S 640K runs them in
// groups of about 200 KB, and a rank makes a point (*bucket j written*)
// after each (64 KiB or more of its range).
class MpiCheckpointPoints : public MpiCheckpoint {
 protected:
  void SetUp() override {
    MpiCheckpoint::SetUp();
    write_file(base_ / "in.txt", heavy_tailed_lines(80000));
    options_ = "in.txt -o out/out.txt --seed 5 --leaf-records 2600 -S 640K -v";
    const auto reference = run_command("cd " + base_.string() + " && " + extshuffle_binary() +
                                       " in.txt -o ref/out.txt --seed 5 --leaf-records 2600");
    ASSERT_EQ(reference.exit_code, 0) << reference.err;
  }
  // Killed once the fault shim holds rank 1's write into its range past
  // two thirds of its share: its journal's points then.
  RankPoints killed_in_rank_1s_range() {
    fs::remove(base_ / "marker");
    const std::uint64_t share = fs::file_size(base_ / "in.txt") / kRanks;
    kill_when_paused(faulty_job(kRanks, "pause-write", "out/", 1, "marker", share * 2 / 3), "marker");
    EXPECT_TRUE(fs::exists(base_ / "marker")) << "rank 1 never wrote its range: " << read_file(base_ / "killed.err");
    return rank_points(base_ / "ck" / "rank-1");
  }
  // The rerun, which must say rank 1 resumed from `bucket` (none: from its
  // first), then the output extshuffle's and DIR empty.
  void expect_resumed_from(std::optional<std::uint64_t> bucket) {
    const auto resumed = run_command(job(kRanks));
    ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
    const std::string from = bucket ? "bucket " + std::to_string(*bucket) : std::string("its first bucket");
    EXPECT_NE(resumed.err.find("resumed after the exchange, rank 0 from "), std::string::npos) << resumed.err;
    EXPECT_NE(resumed.err.find("rank 1 from " + from + ","), std::string::npos) << resumed.err;
    EXPECT_TRUE(same_bytes((base_ / "out" / "out.txt").string(), (base_ / "ref" / "out.txt").string()));
    EXPECT_TRUE(fs::is_empty(base_ / "ck")) << run_command("ls -AR " + (base_ / "ck").string()).out;
    EXPECT_EQ(run_command("ls -A " + (base_ / "out").string()).out, "out.txt\n");
  }
  // The -v line of a rerun of the job as its ranks' journals stand, killed
  // inside its exchange: after the last round every rank made a point
  // after (a rank at most two points ahead of another), each rank's scatter
  // from the record its point of that round names.
  // Killed once the fault shim holds rank 1's write into its scratch past
  // two thirds of its share.
  void kill_inside_the_exchange() {
    fs::remove(base_ / "marker");
    const std::uint64_t share = fs::file_size(base_ / "in.txt") / kRanks;
    kill_when_paused(faulty_job(kRanks, "pause-write", "ck/rank-1/scratch-0", 1, "marker", share * 2 / 3), "marker");
    EXPECT_TRUE(fs::exists(base_ / "marker")) << "rank 1 never received its share: " << read_file(base_ / "killed.err");
  }
  struct ExpectedResume {
    std::uint64_t round = 0;
    std::string line;
  };
  ExpectedResume expected_resume_inside_the_exchange() {
    std::vector<std::vector<std::pair<std::uint64_t, std::uint64_t>>> points;
    std::uint64_t round = UINT64_MAX;
    for (int rank = 0; rank < kRanks; ++rank) {
      points.push_back(rank_scatter_points(base_ / "ck" / ("rank-" + std::to_string(rank))));
      EXPECT_FALSE(points.back().empty()) << "rank " << rank << " holds no point";
      if (points.back().empty()) return {0, "(no point)"};
      round = std::min(round, points.back().back().first);
    }
    std::string line =
        "every rank had made a point after round " + std::to_string(round) + " of the exchange: resumed there, ";
    for (int rank = 0; rank < kRanks; ++rank) {
      const auto& mine = points[rank];
      const auto at = std::find_if(mine.begin(), mine.end(), [&](const auto& point) { return point.first == round; });
      EXPECT_NE(at, mine.end()) << "rank " << rank << " holds no point of round " << round;
      if (at == mine.end()) return {round, "(no point of round " + std::to_string(round) + ")"};
      EXPECT_GE(at - mine.begin() + 3, static_cast<std::ptrdiff_t>(mine.size()))
          << "rank " << rank << " is more than two points ahead";
      line += (rank == 0 ? "" : ", ") + std::string("rank ") + std::to_string(rank) + " from record " +
              std::to_string(at->second);
    }
    return {round, line + "\n"};
  }
  // The job's one line (after the warning every run with --leaf-records
  // prints), exit 1, nothing published: the destination as it was (`held`:
  // the bytes it holds, else none).
  void expect_one_line_and_nothing_published(const CommandResult& failed, const std::string& words,
                                             const std::optional<std::string>& held = std::nullopt) {
    EXPECT_EQ(failed.exit_code, 1) << failed.err;
    EXPECT_EQ(std::count(failed.err.begin(), failed.err.end(), '\n'), 2) << failed.err;
    EXPECT_NE(failed.err.find(words), std::string::npos) << failed.err;
    const fs::path destination = base_ / "out" / "out.txt";
    EXPECT_EQ(fs::exists(destination), held.has_value());
    if (held && fs::exists(destination)) {
      EXPECT_TRUE(read_file(destination) == *held) << "the destination was changed";
    }
  }
};

// A job killed once rank 1 had made points (*bucket j written*): its
// journal damaged in its middle ends the rerun (exit 1, one line naming the
// rank, nothing published); whole again, the rerun resumes rank 1 from the
// bucket after its last point. Then the disk fills while rank 1 journals
// that last point again (the fault shim fails its journal's writes past the
// bytes the killed job's journal held): the job ends with one line, exit 1,
// the destination untouched, rank 1's journal holding the points before;
// torn in its last record, the next run resumes rank 1 from the record
// before that. Each output is extshuffle's byte for byte. Five launches.
TEST_F(MpiCheckpointPoints, AKillAfterBucketJWrittenResumesFromTheNextAndATornOrDamagedJournalIsFound) {
  const RankPoints killed = killed_in_rank_1s_range();
  ASSERT_GE(killed.next_buckets.size(), 2u) << "rank 1 made too few points";
  const fs::path journal = base_ / "ck" / "rank-1" / "journal";
  std::string bytes = read_file(journal);
  bytes[12] = static_cast<char>(bytes[12] ^ 0x01);  // inside its first record, records after it
  write_file(journal, bytes);
  expect_one_line_and_nothing_published(run_command(job(kRanks)), "rank 1: ");
  bytes[12] = static_cast<char>(bytes[12] ^ 0x01);
  write_file(journal, bytes);
  expect_resumed_from(killed.next_buckets.back());

  const std::string published = read_file(base_ / "out" / "out.txt");
  const auto full =
      run_command(faulty_job(kRanks, "enospc", "ck/rank-1/journal", 1, "marker-full", killed.whole_bytes - 1));
  ASSERT_TRUE(fs::exists(base_ / "marker-full")) << full.err;
  expect_one_line_and_nothing_published(full, "rank 1: ", published);
  EXPECT_NE(full.err.find("No space left on device"), std::string::npos) << full.err;
  std::vector<std::uint64_t> before = killed.next_buckets;
  before.pop_back();
  const RankPoints left = rank_points(journal.parent_path());
  EXPECT_EQ(left.next_buckets, before);
  fs::resize_file(journal, left.whole_bytes - 1);
  before.pop_back();
  expect_resumed_from(before.empty() ? std::nullopt : std::optional<std::uint64_t>(before.back()));
}

// A job killed inside its exchange, once the fault shim holds rank 1's
// write into its scratch past two thirds of its share: every rank has made
// points after the same rounds (a rank at most two ahead). The disk full
// while rank 1 journals a later point (the fault shim fails its journal's
// writes past the bytes its rewrite at the rerun's start takes), or while
// it writes the buckets it receives: one line, exit 1, nothing published.
// The rerun goes on after the last round every rank's journal holds, each
// rank's scatter from the record its point of that round names (its -v
// line says so), and writes extshuffle's output. Killed so again, a
// received bucket damaged on its disk is found by its checksum as step 4
// reads it (exit 1, the output as it was); repaired, the rerun writes
// extshuffle's output. Eight launches.
TEST_F(MpiCheckpointPoints, AKillInsideTheExchangeResumesAfterTheLastRoundEveryRankMadeAPointAfter) {
  kill_inside_the_exchange();
  const ExpectedResume killed = expected_resume_inside_the_exchange();

  // The rerun rewrites the journal as it stood (its identity and its last
  // points): the next write is a later point's.
  const fs::path journal = base_ / "ck" / "rank-1" / "journal";
  const auto full =
      run_command(faulty_job(kRanks, "enospc", "ck/rank-1/journal", 1, "marker-full", fs::file_size(journal) + 1));
  ASSERT_TRUE(fs::exists(base_ / "marker-full")) << full.err;
  expect_one_line_and_nothing_published(full, "rank 1: ");
  EXPECT_NE(full.err.find("No space left on device"), std::string::npos) << full.err;
  // It failed at a point made after the rerun went on (rank 0 made it),
  // not in the rewrite.
  EXPECT_GT(rank_scatter_points(base_ / "ck" / "rank-0").back().first, killed.round);
  // Past 64 KiB of the rerun's writes into rank 1's scratch (its bucket
  // writers once finished into buffers already unmapped: a crash, 139).
  const auto scratch_full =
      run_command(faulty_job(kRanks, "enospc", "ck/rank-1/scratch-0", 1, "marker-scratch", 64 << 10));
  ASSERT_TRUE(fs::exists(base_ / "marker-scratch")) << scratch_full.err;
  expect_one_line_and_nothing_published(scratch_full, "rank 1: cannot write scratch file");

  const ExpectedResume after_full = expected_resume_inside_the_exchange();
  const auto resumed = run_command(job(kRanks));
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_NE(resumed.err.find(after_full.line), std::string::npos) << resumed.err;
  EXPECT_TRUE(same_bytes((base_ / "out" / "out.txt").string(), (base_ / "ref" / "out.txt").string()));
  EXPECT_TRUE(fs::is_empty(base_ / "ck")) << run_command("ls -AR " + (base_ / "ck").string()).out;

  // The run goes on writing rank 1's scratch before step 4 finds the
  // damage: only the byte is repaired.
  const std::string published = read_file(base_ / "out" / "out.txt");
  kill_inside_the_exchange();
  const fs::path scratch = base_ / "ck" / "rank-1" / "scratch-0";
  flip_first_byte(scratch);
  expect_one_line_and_nothing_published(run_command(job(kRanks)), "fails its checksum", published);
  flip_first_byte(scratch);
  const auto repaired = run_command(job(kRanks));
  ASSERT_EQ(repaired.exit_code, 0) << repaired.err;
  EXPECT_TRUE(same_bytes((base_ / "out" / "out.txt").string(), (base_ / "ref" / "out.txt").string()));
  EXPECT_TRUE(fs::is_empty(base_ / "ck")) << run_command("ls -AR " + (base_ / "ck").string()).out;
}

}  // namespace
}  // namespace extshuffle::testing::mpi_checkpoint_test
