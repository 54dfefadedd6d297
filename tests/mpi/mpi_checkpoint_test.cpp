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
// success. Kills at random moments of both passes for fixed-size records
// and heavy-tailed JSONL: one a case in CI, more with
// $EXTSHUFFLE_CHECKPOINT_MOMENTS (scripts/mpi_checkpoint_sweep.sh).
// Seventeen mpirun launches.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "extshuffle/io/checkpoint_journal.hpp"
#include "mpi_support.hpp"
#include "support/text_records.hpp"

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

// `count` 8-byte records, record i holding i (little-endian).
std::string numbered_u64(std::uint64_t count) {
  std::string bytes;
  for (std::uint64_t i = 0; i < count; ++i) {
    for (int b = 0; b < 8; ++b) bytes += static_cast<char>((i >> (8 * b)) & 0xff);
  }
  return bytes;
}

// What rank R's journal holds (DIR/rank-R/journal): the next bucket of each
// of its *bucket j written* records (type 105, resume/rank_journal.cpp), in
// order, and where its whole records end.
struct RankPoints {
  std::vector<std::uint64_t> next_buckets;
  std::uint64_t whole_bytes = 0;
};
RankPoints rank_points(const fs::path& rank_directory) {
  const io::JournalContents journal =
      io::read_journal(io::CheckpointDirectory::look(rank_directory.string()), "journal");
  RankPoints points;
  points.whole_bytes = journal.whole_bytes;
  for (const io::JournalRecord& record : journal.records) {
    if (record.type != 105) continue;
    io::FieldReader in(record.payload);
    (void)in.u64();  // the dataset
    points.next_buckets.push_back(in.u64());
  }
  return points;
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
    return faulty_job(ranks, pause_prefix.empty() ? "" : "pause-write", pause_prefix, paused, marker, 0);
  }
  // The job with rank `rank` under the fault shim's `fault` (none when
  // empty) of the files under `prefix`, past `after_bytes` of them.
  std::string faulty_job(int ranks, const std::string& fault, const std::string& prefix, int rank,
                         const std::string& marker, std::uint64_t after_bytes) {
    const std::string scratch = (base_ / "scratch" / "rank-").string() + "\\$OMPI_COMM_WORLD_RANK";
    const std::string bin = extshuffle_mpi_binary() + " " + options_ + " --checkpoint ck -T " + scratch;
    std::string each = "mkdir -p " + scratch + " && ";
    if (fault.empty()) {
      each += "exec " + bin;
    } else {
      const std::string shim = "env LD_PRELOAD=" + from_environment("EXTSHUFFLE_FAULT_SHIM", EXTSHUFFLE_FAULT_SHIM) +
                               " EXTSHUFFLE_FAULT=" + fault + " EXTSHUFFLE_FAULT_PATH=" + (base_ / prefix).string() +
                               " EXTSHUFFLE_FAULT_AFTER_BYTES=" + std::to_string(after_bytes) +
                               " EXTSHUFFLE_FAULT_MARKER=" + (base_ / marker).string() +
                               " EXTSHUFFLE_FAULT_RELEASE=" + (base_ / "never").string();
      each += "if [ \\$OMPI_COMM_WORLD_RANK = " + std::to_string(rank) + " ]; then exec " + shim + " " + bin +
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
  std::string options_ = kOptions;
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
    if (held && fs::exists(destination)) EXPECT_TRUE(read_file(destination) == *held) << "the destination was changed";
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

// A case of the random moments: its input, the job's options and
// extshuffle's (into ref/), the outputs.
struct MomentCase {
  std::string name, input_name, input, options, reference_options;
  std::vector<std::string> outputs;
  std::string python_maker = {};  // else `input`: a script that writes the input directory (argv[1])
};

// Two WebDataset tar shards of 1500 samples each (a .jpg of 16 B to 8 KiB
// and a .cls), as tests/reliability/checkpoint_kill_test.cpp makes them.
constexpr const char* kTarMaker = R"PY(
import io, random, sys, tarfile
random.seed(5)
for shard in range(2):
    with tarfile.open(sys.argv[1] + '/shard-%d.tar' % shard, 'w', format=tarfile.USTAR_FORMAT) as t:
        for i in range(1500):
            key = 's%d%05d' % (shard, i)
            for ext in ('jpg', 'cls'):
                data = random.randbytes(int(2 ** random.uniform(4, 13)) if ext == 'jpg' else 3)
                info = tarfile.TarInfo(key + '.' + ext); info.size = len(data)
                t.addfile(info, io.BytesIO(data))
)PY";

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
    const auto reference =
        run_command("cd " + base_.string() + " && " + extshuffle_binary() + " " + c.reference_options);
    ASSERT_EQ(reference.exit_code, 0) << reference.err;
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
      } else {
        EXPECT_NE(read_file(base_ / "killed.err").find("checkpoint"), std::string::npos)
            << moment << ": ran through without its -v lines: " << read_file(base_ / "killed.err");
      }
      for (const std::string& name : c.outputs) {
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
                     kTarMaker});
  }
  for (std::size_t k = 0; k < cases.size(); ++k) kill_at_random_moments(cases[k], seed + k, moments(1));
}

}  // namespace
}  // namespace extshuffle::testing::mpi_checkpoint_test
