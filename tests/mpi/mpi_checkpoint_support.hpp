// The fixture of the extshuffle-mpi --checkpoint tests
// (mpi_checkpoint_test.cpp, mpi_checkpoint_moments_test.cpp): jobs on 3
// ranks over TCP, each rank with its own -T and --checkpoint ck, some
// under the fault shim; a job killed once the shim's marker is there; what
// a rank's journal holds.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "extshuffle/io/checkpoint_journal.hpp"
#include "mpi_support.hpp"

namespace extshuffle::testing::mpi_checkpoint {

namespace fs = std::filesystem;

constexpr int kRanks = 3;
constexpr const char* kOptions =
    "in.txt -o out/p-{shard}.txt --shards 3 --manifest man/m.json --seed 5 --leaf-records 700 -v";

// Lines of heavy-tailed lengths (a few long ones among short ones).
inline std::string heavy_tailed_lines(int count) {
  std::string text;
  for (int i = 0; i < count; ++i) {
    const int width = i % 97 == 0 ? 900 : i % 13 == 0 ? 80 : 6;
    text += std::to_string(i) + std::string(static_cast<std::size_t>(width), static_cast<char>('a' + i % 26)) + "\n";
  }
  return text;
}

// `count` 8-byte records, record i holding i (little-endian).
inline std::string numbered_u64(std::uint64_t count) {
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
inline RankPoints rank_points(const fs::path& rank_directory) {
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

// Rank R's points of its scatter and exchange (type 106,
// resume/rank_journal.cpp), in order: the round each was made after and
// the record the rank's scatter goes on from.
inline std::vector<std::pair<std::uint64_t, std::uint64_t>> rank_scatter_points(const fs::path& rank_directory) {
  const io::JournalContents journal =
      io::read_journal(io::CheckpointDirectory::look(rank_directory.string()), "journal");
  std::vector<std::pair<std::uint64_t, std::uint64_t>> points;
  for (const io::JournalRecord& record : journal.records) {
    if (record.type != 106) continue;
    io::FieldReader in(record.payload);
    (void)in.u64();  // the dataset
    const std::uint64_t round = in.u64();
    points.emplace_back(round, in.u64());
  }
  return points;
}

// Byte 0 of `path` xored with 0x20 in place, the rest as it is: a bucket's
// byte damaged on its disk, or (a second time) repaired after a run that
// went on writing the file.
inline void flip_first_byte(const fs::path& path) {
  std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
  char byte = 0;
  ASSERT_TRUE(file.get(byte)) << path;
  file.seekp(0);
  file.put(static_cast<char>(byte ^ 0x20));
  ASSERT_TRUE(file.good()) << path;
}

// Every file under `root` (a directory included as its name) with its bytes.
inline std::map<std::string, std::string> tree(const fs::path& root) {
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
  // fault shim paused a rank) or the job has ended, runs `meanwhile` (its
  // stderr and exit code in meanwhile.err, meanwhile.rc), then kills every
  // process of that session. The shell asks every 0.1 s; its 300 s only
  // bound a job that would otherwise hang, as wait_for_event's do
  // (tests/support/process_state.hpp): the order is the marker's.
  CommandResult kill_when_paused(const std::string& command, const std::string& marker,
                                 const std::string& meanwhile = "true") {
    write_file(base_ / "job.sh", command + "\n");
    write_file(base_ / "meanwhile.sh", meanwhile + "\n");
    const std::string script = "cd " + base_.string() + " && (setsid sh job.sh > killed.err 2>&1 & pid=$!; " +
                               "for i in $(seq 3000); do [ -e " + marker +
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

}  // namespace extshuffle::testing::mpi_checkpoint
