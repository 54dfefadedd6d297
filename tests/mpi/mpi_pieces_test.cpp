// extshuffle-mpi's dataset outputs (docs/mpi.md "Shards, splits and the
// manifest") against extshuffle's on 1 to 4 ranks over TCP: JSONL into
// {split}-{shard} pieces, plain, .gz and .zst, with a manifest; CSV with
// quoted newlines into shards; aligned .npy arrays into splits; fixed-size
// records cut by --shard-size; --verify; --dry-run; and the whole dataset
// workflow, datasets of files in (a directory of JSONL files, plain, .gz
// and .zst; TFRecord files; aligned .npy files), each rank with its own -T.
// Every piece is read by
// its format's real reader (check_pieces.py: Python's json and csv, numpy,
// a TFRecord reader checking both CRCs, gzip, zstd): decompressed bytes equal extshuffle's, manifests equal but
// for compressed pieces' sizes and digests. A rank killed mid-run leaves no
// piece and no manifest. The testing knobs (L = 64, F = 8) give small
// inputs a deep plan, so every rank writes into several pieces.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "mpi_suite.hpp"

namespace extshuffle::testing::mpi_pieces_test {
namespace {

namespace fs = std::filesystem;

const std::string kKnobs = " --seed 11 -q -j 1 --leaf-records 64 --fanout 8 ";

// The inputs (check_pieces.py make) are made once per build tree and shared.
class MpiPieces : public MpiSuite<MpiPieces> {
 public:
  static constexpr const char* kScript = "check_pieces.py";
  static constexpr const char* kScriptCommand = "make";

 protected:
  static std::string python() { return "/usr/bin/python3 " + extshuffle_source_dir() + "/tests/mpi/check_pieces.py"; }

  // extshuffle, then extshuffle-mpi on each of `rank_counts`, each in a
  // directory of its own with the same relative names (the manifests name
  // the pieces as given), then check_pieces.py on them all. extshuffle's
  // output depends on nothing but the arguments: one run is the reference
  // for every rank count, and one check process reads each run's pieces.
  void expect_same_pieces(const std::string& arguments, const std::vector<int>& rank_counts = {1, 2, 3, 4}) {
    const fs::path single = dir_ / "single";
    fs::create_directories(single);
    const auto s = run_command("cd " + single.string() + " && " + extshuffle_binary() + " " + arguments);
    ASSERT_EQ(s.exit_code, 0) << arguments << ": " << s.err;
    std::string mpi_directories;
    for (const int ranks : rank_counts) {
      const fs::path mpi = dir_ / ("mpi-" + std::to_string(ranks));
      fs::create_directories(mpi);
      const auto m = run_command(
          "cd " + mpi.string() + " && " +
          on_ranks(ranks, own_scratch_command(arguments, dir_.path() / ("scratch-" + std::to_string(ranks)), ranks)));
      ASSERT_EQ(m.exit_code, 0) << arguments << " on " << ranks << " ranks: " << m.err;
      mpi_directories += " " + mpi.string();
    }
    const auto check = run_command(python() + " check " + single.string() + mpi_directories);
    EXPECT_EQ(check.exit_code, 0) << arguments << ":\n" << check.out << check.err;
  }
  // A fresh test directory for the next argument set.
  void empty_directory() const {
    fs::remove_all(dir_.path());
    fs::create_directories(dir_.path());
  }
};

// With --verify: every rank count's pieces in each codec read back and their
// digests compared across the ranks (VerifyComparesEveryRanksDigests below).
TEST_F(MpiPieces, JsonlIntoSplitsAndShardsPlainAndCompressedWithAManifest) {
  for (const std::string extension : {".jsonl", ".jsonl.gz", ".jsonl.zst"}) {
    expect_same_pieces(input("data.jsonl") + " -o '{split}-{shard}" + extension +
                       "' --split train=0.8,val=0.15,test=rest --shards 3 --manifest manifest.json --verify" + kKnobs);
    empty_directory();
  }
}

TEST_F(MpiPieces, CsvIntoShardsKeepsTheHeaderInEachAndQuotedNewlinesWhole) {
  expect_same_pieces(input("table.csv") + " -o 'part-{shard}-of-{shards}.csv' --shards 5 --manifest manifest.json" +
                     " --verify" + kKnobs);
}

TEST_F(MpiPieces, AlignedNpyArraysIntoSplitsEachWithItsRowsInItsHeader) {
  expect_same_pieces(input("features.npy") + " " + input("labels.npy") +
                     " -o 'features-{split}.npy' -o 'labels-{split}.npy' --split train=0.7,val=0.2 "
                     "--manifest manifest.json" +
                     kKnobs);
}

TEST_F(MpiPieces, FixedSizeRecordsCutByShardSize) {
  expect_same_pieces(input("features.npy") + " -o 'rows-{shard}.npy.gz' --shard-size 7K --manifest manifest.json" +
                     " --verify" + kKnobs);
}

// Text cut by bytes: where a shard ends depends on every record before it
// in its split, found by the ranks in turn (byte_cut_pieces.hpp).
TEST_F(MpiPieces, TextCutByShardSizeAcrossRanks) {
  for (const std::string extension : {".jsonl", ".jsonl.gz"}) {
    expect_same_pieces(input("data.jsonl") + " -o '{split}-{shard}-of-{shards}" + extension +
                       "' --split a=0.6,b=0.1,c=rest --shard-size 20K --manifest manifest.json --verify" + kKnobs);
    empty_directory();
  }
  // Ranges longer than a spool's 1 MiB pieces (records across their ends).
  expect_same_pieces(input("long.jsonl") + " -o 'p-{shard}.jsonl' --shard-size 300K --manifest manifest.json" + kKnobs,
                     {3});
  empty_directory();
  // Hundreds of pieces of a few CSV records each, quoted newlines whole.
  expect_same_pieces(input("table.csv") + " -o 'p-{shard}.csv' --shard-size 100B --manifest manifest.json" + kKnobs,
                     {3});
}

TEST_F(MpiPieces, LeafRootsAndMoreShardsThanRecordsAreWrittenToo) {
  // N <= L: rank 0 alone; shards past the records: empty pieces, headers only.
  const std::string few = (dir_ / "few.csv").string();
  write_file(few, "id,comment\n1,a\n2,b\n3,\"c\nd\"\n");
  expect_same_pieces(few + " -o 'p-{shard}.csv.zst' --shards 5 --manifest manifest.json" + kKnobs);
}

TEST_F(MpiPieces, DryRunPrintsTheSingleMachinePlanThenEachRanksShareAndWritesNothing) {
  const fs::path out = dir_ / "out";
  fs::create_directories(out);
  const std::string arguments = input("data.jsonl") + " -o " + (out / "{shard}.jsonl").string() +
                                " --shards 2 --manifest " + (out / "m.json").string() + " --dry-run -S 64M -T " +
                                out.string();  // the plan names the scratch directory: the same for both
  const auto single = run_single(arguments);
  const auto r = run_mpi(3, arguments);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(single.exit_code, 0) << single.err;
  EXPECT_SAME_BYTES(r.out.substr(0, single.out.size()), single.out) << r.out;
  std::uint64_t records = 0;
  for (int rank = 0; rank < 3; ++rank) {
    const std::string head = "rank " + std::to_string(rank) + ": ";
    const auto at = r.out.find(head, single.out.size());
    ASSERT_NE(at, std::string::npos) << r.out;
    records += std::stoull(r.out.substr(at + head.size()));
  }
  EXPECT_EQ(records, 6000u) << r.out;
  EXPECT_TRUE(fs::is_empty(out)) << "a dry run writes nothing";
}

// --verify on 1 to 4 ranks is also in every expect_same_pieces run above and
// below that names it (JSONL in three codecs, CSV, .npy rows, TFRecord, text
// cut by size), each output compared with extshuffle's besides: here, whole
// splits with no shards, each written by all of 4 ranks, and the refusal.
TEST_F(MpiPieces, VerifyComparesEveryRanksDigests) {
  const fs::path out = dir_ / "out";
  fs::create_directories(out);
  const auto whole = run_mpi(
      4, input("data.jsonl") + " -o " + (out / "{split}.jsonl").string() + " --split a=0.5,b=rest --verify" + kKnobs);
  EXPECT_EQ(whole.exit_code, 0) << whole.err;
  // A split that leaves records out is no whole permutation: refused as by extshuffle.
  const auto r = run_mpi(2, input("data.jsonl") + " -o " + (out / "{split}.jsonl").string() +
                                " --split a=0.5 --verify" + kKnobs);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--verify checks whole permutations"), std::string::npos) << r.err;
}

// What extshuffle warns of, said once by rank 0 in its words: records no
// split takes, and pieces of an older run (removed with --clean).
TEST_F(MpiPieces, WarnsOfLeftOutRecordsAndStalePiecesAsExtshuffleDoes) {
  const std::string out = (dir_ / "p-{shard}.jsonl").string(), seed = " --seed 3 ";
  const std::string splits = input("data.jsonl") + " -o " + (dir_ / "{split}.jsonl").string() + " --split a=0.3,b=0.2";
  const auto left = run_mpi(3, splits + seed);
  const auto single = run_single(splits + seed);
  ASSERT_EQ(left.exit_code, 0) << left.err;
  EXPECT_EQ(left.err, "extshuffle-mpi" + single.err.substr(std::string("extshuffle").size()));
  // The older run's pieces, written by extshuffle: a piece is a file its
  // pattern names, whichever tool wrote it (one mpirun fewer).
  ASSERT_EQ(run_single(input("data.jsonl") + " -o " + out + " --shards 3" + seed).exit_code, 0);
  const auto stale = run_mpi(3, input("data.jsonl") + " -o " + out + " --shards 2" + seed);
  EXPECT_NE(stale.err.find("extshuffle-mpi: warning: 1 file of -o"), std::string::npos) << stale.err;
  EXPECT_NE(stale.err.find("p-00002.jsonl"), std::string::npos) << stale.err;
  EXPECT_TRUE(fs::exists(dir_ / "p-00002.jsonl"));
  const auto clean = run_mpi(3, input("data.jsonl") + " -o " + out + " --shards 2 --clean" + seed);
  EXPECT_EQ(clean.exit_code, 0) << clean.err;
  EXPECT_FALSE(fs::exists(dir_ / "p-00002.jsonl")) << "--clean removes the older run's piece";
  EXPECT_TRUE(fs::exists(dir_ / "p-00001.jsonl"));
}

// One rank's scratch write held by the fault shim (tests/reliability/
// fault_shim.c) while the test kills it with SIGKILL: the job ends, and
// neither a piece, nor a hidden partial piece, nor the manifest is left.
TEST_F(MpiPieces, ARankKilledMidRunLeavesNoPieceAndNoManifest) {
  const fs::path out = dir_ / "out", scratch = dir_ / "scratch";
  fs::create_directories(out);
  fs::create_directories(scratch);
  std::string records(8 << 18, '\0');
  for (std::size_t i = 0; i < records.size() / 8; ++i) std::memcpy(&records[8 * i], &i, 8);
  write_file(dir_ / "in.bin", records);
  const std::string arguments = (dir_ / "in.bin").string() + " -o " + (out / "{split}-{shard}.bin.gz").string() +
                                " --split a=0.5,b=rest --shards 2 --manifest " + (out / "manifest.json").string() +
                                " --record-size 8 --seed 5 -q --leaf-records 4096 --fanout 16 -S 4M -j 1 -T " +
                                scratch.string();
  const fs::path wrapper = dir_ / "fault_in_one_rank.sh", marker = dir_ / "marker", pid_file = dir_ / "rank.pid";
  write_file(wrapper, "#!/bin/bash\nif [ \"$OMPI_COMM_WORLD_RANK\" = 1 ]; then\n  export LD_PRELOAD=" +
                          from_environment("EXTSHUFFLE_FAULT_SHIM", EXTSHUFFLE_FAULT_SHIM) +
                          " EXTSHUFFLE_FAULT=pause-write EXTSHUFFLE_FAULT_PATH=" + scratch.string() +
                          "/ EXTSHUFFLE_FAULT_AFTER_BYTES=300000 EXTSHUFFLE_FAULT_MARKER=" + marker.string() +
                          " EXTSHUFFLE_FAULT_RELEASE=" + (dir_ / "release").string() + "\n  echo $$ > " +
                          pid_file.string() + "\nfi\nexec \"$@\"\n");
  fs::permissions(wrapper, fs::perms::owner_all);
  auto job = std::async(std::launch::async, [&] {
    return run_command(on_ranks(3, wrapper.string() + " " + extshuffle_mpi_binary() + " " + arguments, true));
  });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!fs::exists(marker) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_TRUE(fs::exists(marker)) << "rank 1 never paused";
  EXPECT_FALSE(fs::is_empty(out)) << "the pieces' hidden files exist while the run is under way";
  ASSERT_EQ(::kill(std::stoi(read_file(pid_file)), SIGKILL), 0);
  const auto r = job.get();
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(fs::is_empty(out)) << "no piece, no hidden piece, no manifest left";
  EXPECT_TRUE(fs::is_empty(scratch)) << "scratch files left";
  // The next run writes them all.
  const auto again = run_mpi(3, arguments);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  std::size_t files = 0;
  for (const auto& entry : fs::directory_iterator(out)) files += entry.path().filename().string()[0] != '.';
  EXPECT_EQ(files, 5u) << "4 pieces and the manifest";
}

// The whole workflow: a dataset of files in, pieces and a manifest out.
TEST_F(MpiPieces, MixedCompressedJsonlDirectoryIntoSplitsAndShardsWithAManifest) {
  for (const std::string extension : {".jsonl", ".jsonl.zst"}) {
    expect_same_pieces(input("mixed") + " -o '{split}-{shard}" + extension +
                       "' --split train=0.8,val=0.1,test=rest --shards 3 --manifest manifest.json --verify" + kKnobs);
    empty_directory();
  }
}

TEST_F(MpiPieces, TfrecordDirectoryIntoShardsBothCrcsChecked) {
  expect_same_pieces(input("tfrecord") +
                     " -o 'shard-{shard}-of-{shards}.tfrecord' --shards 4"
                     " --manifest manifest.json --verify" +
                     kKnobs);
}

TEST_F(MpiPieces, AlignedNpyDirectoriesIntoSplits) {
  expect_same_pieces(input("features") + " " + input("labels") +
                     " -o 'features-{split}.npy' -o 'labels-{split}.npy' --split train=0.75,val=rest"
                     " --manifest manifest.json" +
                     kKnobs);
}

}  // namespace
}  // namespace extshuffle::testing::mpi_pieces_test
