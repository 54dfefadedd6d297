// The whole dataset workflow under extshuffle-mpi, inputs and outputs
// together, against extshuffle on 1 to 4 ranks over TCP, each rank with its
// own scratch directory (docs/mpi.md, "Datasets" and "Shards, splits and
// the manifest"): a directory of JSONL files, plain, .gz and .zst, into
// {split}-{shard} pieces with a manifest; a directory of TFRecord files into
// shards; directories of aligned .npy files into splits. check_pieces.py
// reads every piece with its format's real reader (Python's json, numpy, a
// TFRecord reader checking both CRCs; gzip and zstd for compressed pieces)
// and compares the decompressed pieces and the manifests (inputs
// included) with extshuffle's, compressed pieces' sizes and digests apart.
// The testing knobs (L = 64, F = 8) give these few thousand records a plan
// of several levels, so the ranks scatter, exchange and write into several
// pieces each; the seed is fixed, so the outputs are too.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "mpi_support.hpp"

namespace extshuffle::testing {
namespace {

namespace fs = std::filesystem;

const std::string kKnobs = " --seed 23 -q -j 1 --leaf-records 64 --fanout 8 ";

class MpiDatasetWorkflow : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    inputs_ = new TempDir;
    const auto made = run_command(python() + " make-datasets " + inputs_->path().string());
    ASSERT_EQ(made.exit_code, 0) << made.err;
  }
  static void TearDownTestSuite() {
    delete inputs_;
    inputs_ = nullptr;
  }
  static std::string python() { return "/usr/bin/python3 " + extshuffle_source_dir() + "/tests/mpi/check_pieces.py"; }
  static std::string input(const std::string& name) { return (inputs_->path() / name).string(); }

  // extshuffle, then extshuffle-mpi on 1 to 4 ranks (each rank its own -T),
  // each run in a directory of its own with the same relative names, then
  // check_pieces.py on both.
  void expect_same_pieces_on_1_to_4_ranks(const std::string& arguments) {
    const fs::path single = dir_.path() / "single";
    fs::create_directories(single);
    const auto s = run_command("cd " + single.string() + " && " + extshuffle_binary() + " " + arguments);
    ASSERT_EQ(s.exit_code, 0) << arguments << ": " << s.err;
    for (int ranks = 1; ranks <= 4; ++ranks) {
      const fs::path mpi = dir_.path() / ("mpi-" + std::to_string(ranks));
      fs::create_directories(mpi);
      const std::string scratch = (dir_.path() / ("scratch-" + std::to_string(ranks))).string();
      const auto m = run_command("cd " + mpi.string() + " && " + on_ranks(ranks, own_scratch_command(arguments, scratch)));
      ASSERT_EQ(m.exit_code, 0) << arguments << " on " << ranks << " ranks: " << m.err;
      const auto check = run_command(python() + " check " + single.string() + " " + mpi.string());
      EXPECT_EQ(check.exit_code, 0) << arguments << " on " << ranks << " ranks:\n" << check.out << check.err;
    }
  }

  TempDir dir_;
  static TempDir* inputs_;
};

TempDir* MpiDatasetWorkflow::inputs_ = nullptr;

TEST_F(MpiDatasetWorkflow, MixedCompressedJsonlDirectoryIntoSplitsAndShardsWithAManifest) {
  expect_same_pieces_on_1_to_4_ranks(input("mixed") +
                                     " -o '{split}-{shard}.jsonl' --split train=0.8,val=0.1,test=rest --shards 3"
                                     " --manifest manifest.json --verify" + kKnobs);
}

TEST_F(MpiDatasetWorkflow, MixedCompressedJsonlDirectoryIntoCompressedPieces) {
  expect_same_pieces_on_1_to_4_ranks(input("mixed") + " -o '{split}-{shard}.jsonl.zst' --split train=0.9,test=rest"
                                     " --shards 2 --manifest manifest.json" + kKnobs);
}

TEST_F(MpiDatasetWorkflow, TfrecordDirectoryIntoShardsBothCrcsChecked) {
  expect_same_pieces_on_1_to_4_ranks(input("tfrecord") + " -o 'shard-{shard}-of-{shards}.tfrecord' --shards 4"
                                     " --manifest manifest.json --verify" + kKnobs);
}

TEST_F(MpiDatasetWorkflow, AlignedNpyDirectoriesIntoSplits) {
  expect_same_pieces_on_1_to_4_ranks(input("features") + " " + input("labels") +
                                     " -o 'features-{split}.npy' -o 'labels-{split}.npy' --split train=0.75,val=rest"
                                     " --manifest manifest.json" + kKnobs);
}

}  // namespace
}  // namespace extshuffle::testing
