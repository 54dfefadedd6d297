// extshuffle-mpi on WebDataset tar archives (docs/mpi.md, "Datasets"),
// against extshuffle byte for byte on 1 to 3 ranks over TCP only, each rank
// with a scratch directory of its own (-T): archives written by Python's
// tarfile (GNU and pax headers, long names, a directory member inside a
// sample, one archive gzipped by the real tool), samples of two or three
// members. Each archive is indexed by the rank that holds it, which sends
// its samples' frames to the ranks that hold them. Pieces are read back by
// Python's tarfile: every sample whole, exactly once. Nothing here is
// random: the archives come from a fixed seed.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <initializer_list>
#include <string>

#include "mpi_support.hpp"

namespace extshuffle::testing::mpi_tar_test {
namespace {

const std::string kKnobs = " --leaf-records 64 --fanout 8 ";

const char* const kMakeArchives = R"(
import io, os, random, sys, tarfile
import numpy as np
root = sys.argv[1]
rng = random.Random(3)
def add(t, name, data):
    info = tarfile.TarInfo(name)
    info.size = len(data)
    t.addfile(info, io.BytesIO(data))
rows = 0
for a, (n, fmt) in enumerate([(180, tarfile.GNU_FORMAT), (70, tarfile.PAX_FORMAT), (230, tarfile.GNU_FORMAT)]):
    with tarfile.open(os.path.join(root, "shard%d.tar" % a), "w", format=fmt) as t:
        for i in range(n):
            key = "a%d/%s%05d" % (a, "k" * (120 if i % 17 == 0 else 1), i)
            if i == 5:
                d = tarfile.TarInfo(key + ".dir")
                d.type = tarfile.DIRTYPE
                t.addfile(d)
            add(t, key + ".json", ('{"a": %d, "i": %d}' % (a, i)).encode())
            add(t, key + ".bin", bytes(rng.randrange(256) for _ in range(rng.choice([0, 3, 600, 5000]))))
            if i % 3 == 0:
                add(t, key + ".cls", str(i % 10).encode())
    rows += n
np.save(os.path.join(root, "labels.npy"), np.arange(rows, dtype=np.int32))
for name, members in [("cut1.tar", [("x.txt", b"x"), ("cut.jpg", b"jpeg")]), ("cut2.tar", [("cut.txt", b"c"), ("y.txt", b"y")])]:
    with tarfile.open(os.path.join(root, name), "w") as t:
        for member, data in members:
            add(t, member, data)
)";

// Reads every output archive named on the command line with tarfile, after
// the inputs' directory: the samples, grouped as webdataset groups them, must
// be exactly the inputs', each whole and once.
const char* const kReadBack = R"(
import glob, os, sys, tarfile
def samples(paths):
    out = {}
    for path in paths:
        with tarfile.open(path) as t:
            for m in t.getmembers():
                if not m.isfile():
                    continue
                key = m.name.split("/")[-1].split(".")[0]
                key = m.name.rsplit("/", 1)[0] + "/" + key
                out.setdefault(key, {})[m.name] = t.extractfile(m).read()
    return out
inputs = samples(sorted(glob.glob(os.path.join(sys.argv[1], "shard*.tar"))))
outputs = samples(sys.argv[2:])
assert len(inputs) == 480, len(inputs)
assert outputs == inputs, (len(outputs), len(inputs))
print("ok")
)";

class MpiTar : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    inputs_ = new TempDir;
    write_file(inputs_->path() / "make.py", kMakeArchives);
    const auto made = run_command("/usr/bin/python3 " + (inputs_->path() / "make.py").string() + " " +
                                  inputs_->path().string() + " && cd " + inputs_->path().string() +
                                  " && gzip -c shard2.tar > shard2.tar.gz && mkdir archives && cp shard0.tar shard1.tar shard2.tar archives/" +
                                  " && cat shard0.tar shard1.tar > joined.tar && mkdir links && cd links && echo 1 > " +
                                  "a.txt && ln a.txt b.txt && tar --format=gnu -cf ../links.tar a.txt b.txt");
    ASSERT_EQ(made.exit_code, 0) << made.err;
  }
  static void TearDownTestSuite() {
    delete inputs_;
    inputs_ = nullptr;
  }
  static std::string input(const std::string& name) { return (inputs_->path() / name).string(); }

  // extshuffle's pieces of `operands` into `pattern` (in this test's
  // directory) with `arguments`, then extshuffle-mpi's on each of `ranks`
  // ranks: the same files, the same bytes.
  void expect_same(const std::string& operands, const std::string& pattern, const std::string& arguments,
                   std::initializer_list<int> ranks) {
    const std::filesystem::path reference = dir_ / "reference";
    std::filesystem::create_directories(reference);
    const auto single = run_single(operands + " -o " + (reference / pattern).string() + " --seed 11 -q " + arguments);
    ASSERT_EQ(single.exit_code, 0) << single.err;
    for (const int p : ranks) {
      const std::filesystem::path out = dir_ / ("ranks" + std::to_string(p));
      std::filesystem::create_directories(out);
      const auto r = run_mpi_own_scratch(p, operands + " -o " + (out / pattern).string() + " --seed 11 -q -j 1 " +
                                                arguments,
                                         dir_ / ("scratch" + std::to_string(p)));
      EXPECT_EQ(r.exit_code, 0) << "P = " << p << ": " << r.err;
      std::size_t files = 0;
      for (const auto& entry : std::filesystem::directory_iterator(reference)) {
        ++files;
        EXPECT_TRUE(same_bytes(entry.path().string(), (out / entry.path().filename()).string()))
            << entry.path().filename() << " on " << p << " ranks: " << operands << arguments;
      }
      EXPECT_GT(files, 0u);
    }
  }

  void expect_read_back(const std::string& outputs) {
    write_file(dir_ / "read.py", kReadBack);
    const auto r = run_command("/usr/bin/python3 " + (dir_ / "read.py").string() + " " + inputs_->path().string() +
                               " " + outputs);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, "ok\n") << r.err;
  }

  TempDir dir_;
  static TempDir* inputs_;
};

TempDir* MpiTar::inputs_ = nullptr;

TEST_F(MpiTar, ArchivesIntoShardsLikeExtshuffleOnOneToThreeRanks) {
  const std::string archives = input("shard0.tar") + " " + input("shard1.tar") + " " + input("shard2.tar.gz");
  // Chunks that move between ranks, and the default knobs (a leaf root:
  // shared by the ranks, or run alone on one).
  expect_same(archives, "{shard}.tar", "--shards 3 --verify" + kKnobs, {1, 2, 3});
  expect_read_back((dir_ / "ranks3").string() + "/*.tar");
  expect_same(archives, "out.tar", "", {1, 2});
  expect_read_back((dir_ / "ranks2" / "out.tar").string());
}

TEST_F(MpiTar, OneArchiveSplitsCutByBytesAndTheManifest) {
  // One plain archive is a dataset of one file, indexed by one rank.
  expect_same(input("shard2.tar"), "{split}-{shard}.tar", "--split train=0.9,val=rest --shard-size 64K" + kKnobs,
              {2, 3});
  const std::string manifest = (dir_ / "manifest.json").string();
  const std::string out = (dir_ / "m").string();
  std::filesystem::create_directories(out);
  const auto r = run_mpi(2, input("shard0.tar") + " " + input("shard1.tar") + " -o " + out +
                                "/{shard}.tar --shards 2 --manifest " + manifest + " --verify --seed 2 -q" + kKnobs);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string text = read_file(manifest);
  EXPECT_NE(text.find("\"format\": \"tar\""), std::string::npos) << text;
  EXPECT_NE(text.find("\"records\": 250"), std::string::npos) << text;
}

TEST_F(MpiTar, ArchivesAlignedWithAnNpyArray) {
  const std::filesystem::path reference = dir_ / "reference";
  std::filesystem::create_directories(reference);
  const std::string operands = input("archives");  // one INPUT per -o: a directory of archives
  const std::string labels = input("labels.npy");
  const auto single = run_single(operands + " -o " + (reference / "x.tar").string() + " " + labels + " -o " +
                                 (reference / "y.npy").string() + " --seed 3 -q" + kKnobs);
  ASSERT_EQ(single.exit_code, 0) << single.err;
  for (const int p : {1, 3}) {
    const std::filesystem::path out = dir_ / ("ranks" + std::to_string(p));
    std::filesystem::create_directories(out);
    const auto r = run_mpi(p, operands + " -o " + (out / "x.tar").string() + " " + labels + " -o " +
                                  (out / "y.npy").string() + " --seed 3 -q -j 1" + kKnobs);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(same_bytes((reference / "x.tar").string(), (out / "x.tar").string())) << p;
    EXPECT_TRUE(same_bytes((reference / "y.npy").string(), (out / "y.npy").string())) << p;
  }
}

// Concatenated archives, hard links and a sample cut across archives, as
// extshuffle reads them (docs/cli.md, "Tar archives"), found by the rank
// that holds the archive and said once.
TEST_F(MpiTar, TarEdgesOnTwoRanks) {
  const std::string out = (dir_ / "out.tar").string();
  auto r = run_mpi(2, input("joined.tar") + " " + input("shard2.tar") + " -o " + out + " --seed 1");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  const std::string at = std::to_string(std::filesystem::file_size(input("shard0.tar")));
  EXPECT_NE(r.err.find("extshuffle-mpi: rank "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("joined.tar': data at byte " + at + " after the end-of-archive marker"), std::string::npos)
      << r.err;
  EXPECT_FALSE(std::filesystem::exists(out));
  expect_same(input("joined.tar") + " " + input("shard2.tar"), "x.tar", "--ignore-zeros --verify", {2});
  r = run_mpi(2, input("links.tar") + " " + input("cut1.tar") + " " + input("cut2.tar") + " -o " + out + " --seed 1");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("warning: tar: 1 hard-link members skipped"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("warning: tar: 1 samples cut across two archives"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 2) << "said once: " << r.err;
  r = run_mpi(2, input("cut1.tar") + " " + input("cut2.tar") + " -o " + out + ".v --seed 1 --verify");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("sample 'cut' is cut across"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(out + ".v"));
}

}  // namespace
}  // namespace extshuffle::testing::mpi_tar_test
