// extshuffle-mpi reading a dataset of files (docs/mpi.md, "Datasets"), against
// extshuffle byte for byte (cmp) on 1 to 4 ranks over TCP only, each rank
// with a scratch directory of its own (-T), as ranks on separate machines:
// a directory of mixed .jsonl, .jsonl.gz and .jsonl.zst files (one lacking
// its final newline), CSV files with one header and quoted newlines, .npy
// arrays, TFRecord files, and aligned datasets. The files are written by
// Python's json and csv modules and numpy, compressed by the gzip and zstd
// tools, and TFRecord frames by a bitwise CRC-32C here; the outputs are
// also read back by Python. The knobs (L = 64, F = 8) give every dataset
// several chunks, so that records move between ranks; the default L makes
// the root one leaf, which the ranks share, or one rank runs alone.
// Nothing here is random: the files come from fixed seeds.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <string>
#include <vector>

#include "mpi/inputs/dataset_files.hpp"
#include "mpi_support.hpp"

namespace extshuffle::testing::mpi_dataset_input_test {
namespace {

const std::string kKnobs = " --leaf-records 64 --fanout 8 ";

// The inputs: real writers of each format (/usr/bin/python3 has numpy).
const char* const kMakeInputs = R"(
import csv, json, os, random, sys
import numpy as np
sys.path.insert(0, sys.argv[2])
from check_pieces import tfrecord_frame  # one TFRecord writer for the tests
root = sys.argv[1]
rng = random.Random(5)
def mkdir(name):
    os.makedirs(os.path.join(root, name), exist_ok=True)
    return os.path.join(root, name)
d = mkdir("jsonl")
for k, n in enumerate([300, 41, 500, 7, 260, 120]):
    lines = "".join(json.dumps({"f": k, "i": i, "s": "x" * rng.randint(0, 40)}) + "\n" for i in range(n))
    if k == 2:
        lines = lines[:-1]  # its last record lacks its newline
    open(os.path.join(d, "part%d.jsonl" % k), "w").write(lines)
d = mkdir("csv")
for k, n in enumerate([180, 95, 260]):
    with open(os.path.join(d, "part%d.csv" % k), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["id", "text"])
        for i in range(n):
            w.writerow(["%d-%d" % (k, i), "two\nlines" if i % 7 == 0 else 'say "hi"' * (i % 3)])
d = mkdir("npy")
for k, n in enumerate([150, 33, 210]):
    np.save(os.path.join(d, "part%d.npy" % k), np.arange(n * 3, dtype=np.float32).reshape(n, 3) + 1000 * k)
d = mkdir("tfrecord")
for k, n in enumerate([120, 60, 200]):
    with open(os.path.join(d, "part%d.tfrecord" % k), "wb") as f:
        for i in range(n):
            data = bytes(rng.randrange(256) for _ in range(rng.randint(1, 48)))
            f.write(tfrecord_frame(data))
)";

class MpiDatasetInput : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    inputs_ = new TempDir;
    write_file(inputs_->path() / "make.py", kMakeInputs);
    const auto made = run_command("/usr/bin/python3 " + (inputs_->path() / "make.py").string() + " " +
                                  inputs_->path().string() + " " + extshuffle_source_dir() + "/tests/mpi");
    ASSERT_EQ(made.exit_code, 0) << made.err;
    // Half the JSONL files compressed, by the real tools: the two kinds and plain between them.
    const std::string d = input("jsonl");
    const auto packed = run_command("gzip " + d + "/part1.jsonl " + d + "/part4.jsonl && zstd -q --rm " + d +
                                    "/part2.jsonl " + d + "/part5.jsonl");
    ASSERT_EQ(packed.exit_code, 0) << packed.err;
    const auto csv = run_command("gzip " + input("csv") + "/part1.csv");
    ASSERT_EQ(csv.exit_code, 0) << csv.err;
  }
  static void TearDownTestSuite() {
    delete inputs_;
    inputs_ = nullptr;
  }
  static std::string input(const std::string& name) { return (inputs_->path() / name).string(); }

  // extshuffle's output of `operands` (inputs and -o) with `arguments`,
  // then extshuffle-mpi's on each of `ranks` ranks, compared byte for byte.
  void expect_same(const std::string& operands, const std::string& arguments, std::initializer_list<int> ranks) {
    const std::string reference = (dir_ / "reference").string();
    const auto single = run_single(operands + " -o " + reference + " --seed 11 -q " + arguments);
    ASSERT_EQ(single.exit_code, 0) << single.err;
    for (const int p : ranks) {
      const std::string output = (dir_ / ("ranks" + std::to_string(p))).string();
      const auto r = run_mpi_own_scratch(p, operands + " -o " + output + " --seed 11 -q -j 1 " + arguments,
                                         dir_ / ("scratch" + std::to_string(p)));
      EXPECT_EQ(r.exit_code, 0) << "P = " << p << ": " << r.err;
      EXPECT_EQ(r.err, "");
      EXPECT_TRUE(same_bytes(reference, output)) << operands << arguments << " on " << p << " ranks";
    }
  }

  // Python's reading of the outputs with `script` (given this test's
  // directory and the inputs' one): exit 0, prints "ok".
  void expect_python(const std::string& script) {
    write_file(dir_ / "check.py", script);
    const auto r = run_command("/usr/bin/python3 " + (dir_ / "check.py").string() + " " + dir_.path().string() + " " +
                               inputs_->path().string());
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, "ok\n") << r.err;
  }

  TempDir dir_;
  static TempDir* inputs_;
};

TempDir* MpiDatasetInput::inputs_ = nullptr;

TEST_F(MpiDatasetInput, DirectoryOfPlainGzipAndZstdJsonl) {
  expect_same(input("jsonl"), kKnobs, {1, 2, 3, 4});
  // Every record once, as Python's json reads them, the one without its newline included.
  expect_python(R"(
import glob, gzip, json, subprocess, sys
out = [json.loads(line) for line in open(sys.argv[1] + "/ranks4")]
records = []
for path in sorted(glob.glob(sys.argv[2] + "/jsonl/*")):
    data = gzip.open(path).read() if path.endswith(".gz") else \
        subprocess.run(["zstd", "-dc", path], capture_output=True).stdout if path.endswith(".zst") else open(path, "rb").read()
    records += [json.loads(line) for line in data.decode().splitlines()]
key = lambda r: (r["f"], r["i"])
assert len(out) == len(records) == 300 + 41 + 500 + 7 + 260 + 120, (len(out), len(records))
assert sorted(out, key=key) == sorted(records, key=key)
print("ok")
)");
}

TEST_F(MpiDatasetInput, DirectoryWhoseRootIsOneLeaf) {
  // The default L: the ranks share the leaf root's shuffle.
  expect_same(input("jsonl"), "", {2, 4});
}

// The default knobs: every dataset here is one leaf, which one rank runs as
// extshuffle does, from its records copied into one range of its scratch
// (mpirun -np 1, or the program started without mpirun), and two ranks
// share. The first run a user tries.
TEST_F(MpiDatasetInput, EveryKindOfDatasetAtTheDefaultKnobsOnOneAndTwoRanks) {
  const std::string csv = input("csv");
  for (const std::string& operands :
       {input("jsonl"), csv + "/part0.csv " + csv + "/part1.csv.gz " + csv + "/part2.csv", input("npy"),
        input("tfrecord"), input("tfrecord") + "/part2.tfrecord", input("jsonl") + "/part1.jsonl.gz"}) {
    expect_same(operands, "", {1, 2});
    // Without mpirun: a job of one rank (an MPI singleton).
    const std::string output = (dir_ / "alone").string();
    const auto r = run_command(mpi_environment() + extshuffle_mpi_binary() + " " + operands + " -o " + output +
                               " --seed 11 -q -T " + dir_.path().string());
    EXPECT_EQ(r.exit_code, 0) << operands << ": " << r.err;
    EXPECT_TRUE(same_bytes((dir_ / "reference").string(), output)) << operands << " without mpirun";
  }
}

TEST_F(MpiDatasetInput, CsvFilesWithOneHeader) {
  const std::string d = input("csv");
  expect_same(d + "/part0.csv " + d + "/part1.csv.gz " + d + "/part2.csv", kKnobs, {1, 2, 3, 4});
  expect_python(R"(
import csv, sys
rows = list(csv.reader(open(sys.argv[1] + "/ranks4", newline="")))
assert rows[0] == ["id", "text"], rows[0]
assert sorted(r[0] for r in rows[1:]) == sorted("%d-%d" % (k, i) for k, n in enumerate([180, 95, 260]) for i in range(n))
print("ok")
)");
}

TEST_F(MpiDatasetInput, NpyArraysOfOneDtype) {
  expect_same(input("npy"), kKnobs, {1, 2, 3, 4});
  expect_python(R"(
import glob, sys
import numpy as np
out = np.load(sys.argv[1] + "/ranks4")
parts = np.concatenate([np.load(p) for p in sorted(glob.glob(sys.argv[2] + "/npy/*.npy"))])
assert out.shape == parts.shape == (393, 3), out.shape
assert (np.sort(out[:, 0]) == np.sort(parts[:, 0])).all()
print("ok")
)");
}

TEST_F(MpiDatasetInput, TfrecordFilesAndOneTfrecordFile) {
  expect_same(input("tfrecord"), kKnobs, {1, 2, 3, 4});
  // One file: its frames are found by one rank, from its start.
  expect_same(input("tfrecord") + "/part2.tfrecord", kKnobs, {3});
}

TEST_F(MpiDatasetInput, AlignedDatasetsOfFiles) {
  // The same records, plain and compressed the other way round: one permutation for both.
  const std::string other = (dir_ / "other").string();
  const auto made = run_command("mkdir " + other + " && cd " + input("jsonl") +
                                " && for f in *; do case $f in *.gz) zcat $f > " + other +
                                "/${f%.gz};; *.zst) zstd -q -dc $f > " + other + "/${f%.zst};; *) gzip -c $f > " +
                                other + "/$f.gz;; esac; done");
  ASSERT_EQ(made.exit_code, 0) << made.err;
  const std::string a = (dir_ / "a").string(), b = (dir_ / "b").string();
  const auto single = run_single(input("jsonl") + " " + other + " -o " + a + " -o " + b + " --seed 4 -q" + kKnobs);
  ASSERT_EQ(single.exit_code, 0) << single.err;
  for (const int p : {2, 3}) {
    const std::string pa = a + std::to_string(p), pb = b + std::to_string(p);
    const auto r = run_mpi_own_scratch(p, input("jsonl") + " " + other + " -o " + pa + " -o " + pb +
                                              " --seed 4 -q -j 1" + kKnobs,
                                       dir_ / ("scratch" + std::to_string(p)));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(same_bytes(a, pa)) << p;
    EXPECT_TRUE(same_bytes(b, pb)) << p;
  }
}

TEST_F(MpiDatasetInput, CorruptGzipOnOneRankIsOneLineAndNoOutput) {
  const std::filesystem::path bad = dir_ / "bad";
  std::filesystem::create_directories(bad);
  for (const char* name : {"part0.jsonl", "part1.jsonl.gz", "part3.jsonl"}) {
    std::filesystem::copy_file(input("jsonl") + "/" + name, bad / name);
  }
  const std::string good = read_file(input("jsonl") + "/part4.jsonl.gz");
  write_file(bad / "part4.jsonl.gz", good.substr(0, good.size() / 2));  // cut off: a truncated stream
  const std::string output = (dir_ / "out.jsonl").string();
  for (const int p : {1, 3}) {
    const auto r = run_mpi_own_scratch(p, bad.string() + " -o " + output + " --seed 1 -q", dir_ / "scratch");
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_EQ(r.err.rfind("extshuffle-mpi: rank ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find("part4.jsonl.gz"), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(output));
    for (const auto& entry : std::filesystem::directory_iterator(dir_.path())) {
      EXPECT_EQ(entry.path().filename().string().find("partial"), std::string::npos) << entry.path();
    }
  }
}

TEST_F(MpiDatasetInput, InputsDifferingInFormatOrHeaderAreRefusedAsExtshuffleRefusesThem) {
  const std::filesystem::path other = dir_ / "other.csv";
  write_file(other, "id,other\n1,2\n");
  const std::string output = (dir_ / "out").string();
  for (const std::string& operands : {input("csv") + "/part0.csv " + other.string(),
                                      input("csv") + "/part0.csv " + input("npy") + "/part0.npy"}) {
    const auto single = run_single(operands + " -o " + output + " -q");
    const auto r = run_mpi_own_scratch(3, operands + " -o " + output + " -q", dir_ / "scratch");
    EXPECT_EQ(single.exit_code, 1);
    EXPECT_EQ(r.exit_code, 1) << r.err;
    // The same words, after the rank that found them.
    ASSERT_EQ(single.err.rfind("extshuffle: ", 0), 0u) << single.err;
    EXPECT_NE(r.err.find(single.err.substr(std::string("extshuffle: ").size())), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(output));
  }
}

TEST_F(MpiDatasetInput, WhatStaysRefusedIsOneLineAndExitTwo) {
  const std::string out = (dir_ / "out").string();
  for (const std::string& arguments :
       {input("jsonl") + " - -o " + out, input("jsonl") + " -o -", std::string("-e a b -o ") + out,
        std::string("-i 1-9 -o ") + out, input("jsonl") + " -r -o " + out}) {
    const auto r = run_mpi(2, arguments);
    EXPECT_EQ(r.exit_code, 2) << arguments << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << arguments << ": " << r.err;
    EXPECT_EQ(r.err.rfind("extshuffle-mpi: ", 0), 0u) << r.err;
  }
}

// Ranks that see other files under the same names (another mount, a stale
// cache): each rank runs in a directory of its own, where data/ holds other
// files. One line naming the rank, the file and what differs; no count
// built on a disagreement.
TEST_F(MpiDatasetInput, RanksThatSeeDifferentInputsFailNamingTheRankAndTheFile) {
  const std::filesystem::path base = dir_ / "views";
  for (int rank = 0; rank < 2; ++rank) {
    const std::filesystem::path view = base / ("rank-" + std::to_string(rank));
    std::filesystem::create_directories(view / "data");
    std::filesystem::create_directories(view / "dir");
    write_file(view / "data" / "a.jsonl", rank == 0 ? "{\"a\": 1}\n{\"a\": 2}\n" : "{\"a\": 1}\n");
    write_file(view / "dir" / "a.jsonl", "{\"a\": 1}\n");
    if (rank == 1) write_file(view / "dir" / "b.jsonl", "{\"b\": 1}\n");
  }
  const std::string out = (dir_ / "out").string();
  const auto on_two_views = [&](const std::string& operands) {
    return run_command(on_ranks(2, "sh -c \"cd " + base.string() + "/rank-\\$OMPI_COMM_WORLD_RANK && exec " +
                                       extshuffle_mpi_binary() + " " + operands + " -o " + out + " --seed 1 -T .\""));
  };
  const struct {
    std::string operands, words;
  } cases[] = {
      {"data/a.jsonl", "rank 1: input 'data/a.jsonl': 9 bytes here, 18 bytes on rank 0 (the ranks see different"},
      {"dir", "rank 1: inputs: 2 files here, 1 on rank 0 ('dir/b.jsonl' is not on rank 0)"},
      {"dir/a.jsonl dir/b.jsonl", "rank 1: input 'dir/b.jsonl': 9 bytes here, missing on rank 0"},
  };
  for (const auto& c : cases) {
    const auto r = on_two_views(c.operands);
    EXPECT_EQ(r.exit_code, 1) << c.operands << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_EQ(r.err.rfind("extshuffle-mpi: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find(c.words), std::string::npos) << c.operands << ": " << r.err;
    EXPECT_FALSE(std::filesystem::exists(out));
  }
}

// The assignment of files to ranks: deterministic, largest first onto the
// least loaded rank, so that no rank reads more than an even share plus
// one file.
TEST(MpiDatasetFiles, AssignsLargestFirstToTheLeastLoadedRank) {
  EXPECT_EQ(mpi::assign_files_by_size({10, 50, 20, 30}, 2), (std::vector<int>{0, 0, 1, 1}));
  EXPECT_EQ(mpi::assign_files_by_size({5, 5, 5}, 4), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(mpi::assign_files_by_size({}, 3), std::vector<int>{});
  std::vector<std::uint64_t> sizes;
  for (std::uint64_t k = 0; k < 100; ++k) sizes.push_back((k * 7919) % 1000 + 1);
  const std::vector<int> holders = mpi::assign_files_by_size(sizes, 7);
  std::vector<std::uint64_t> load(7, 0);
  std::uint64_t total = 0;
  for (std::size_t k = 0; k < sizes.size(); ++k) {
    load[static_cast<std::size_t>(holders[k])] += sizes[k];
    total += sizes[k];
  }
  const std::uint64_t largest = *std::max_element(sizes.begin(), sizes.end());
  for (const std::uint64_t l : load) EXPECT_LE(l, total / 7 + largest);
}

}  // namespace
}  // namespace extshuffle::testing::mpi_dataset_input_test
