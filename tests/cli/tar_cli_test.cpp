// Black-box tests of WebDataset tar shards (--format tar, .tar, .tar.gz,
// .tar.zst): datasets written by Python's tarfile (pax and ustar) and by
// GNU tar (GNU long names, directory members), shuffled, then read back by
// the real readers: Python's tarfile reads every piece and every member
// whole, samples grouped by webdataset's key rule come out complete, byte
// for byte (extended headers included) and each exactly once, GNU `tar tvf`
// lists every piece. Same seed, same bytes at any -S; shards concatenated
// hold the unsharded output's samples in its order; the order is P(seed, N)
// as N lines take it. Corrupt, truncated and split samples are one-line
// errors with nothing written.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <functional>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "support/command.hpp"
#include "support/tools.hpp"

namespace extshuffle::testing::tar_cli_test {
namespace {

const std::string kBinary = extshuffle_binary();

// Writes the dataset into the current directory: shard-0.tar (pax, holding
// a 300-byte name), shard-1.tar (GNU tar --format=gnu: GNU long names and
// directory members), shard-2.tar (ustar) and shard-2.tar.zst. Samples of
// 1-4 members, sizes log-uniform from 0 bytes to 16 KiB, one in 200 of a
// member of 256-512 KiB (about 33 MB in all: the sizes are a quarter of
// what they were, the samples as many: every archive still holds hundreds
// of samples, long members and the large ones that fill a piece alone). Keys are s<number>, numbered in input order, so that
// the output's order can be read off its keys.
const char* const kMakeDataset = R"PY(
import io, os, random, subprocess, sys, tarfile
random.seed(int(sys.argv[1]))
n = int(sys.argv[2])
exts = ['jpg', 'json', 'cls', 'txt', 'wav']
def member_size():
    if random.random() < 0.005: return random.randint(1 << 18, 1 << 19)
    return int(2 ** random.uniform(0, 14)) - 1
def members(key):
    return [(key + '.' + e, random.randbytes(member_size())) for e in random.sample(exts, random.randint(1, 4))]
third = n // 3
keys = ['s%06d' % i for i in range(n)]
# 0: pax, the first sample's path is 300 bytes long (a pax path record).
long_dir = 'd' * 200 + '/' + 'k' * 88
with tarfile.open('shard-0.tar', 'w', format=tarfile.PAX_FORMAT) as t:
    for i in range(third):
        for name, data in members(keys[i]):
            if i == 0: name = long_dir + '/' + name
            info = tarfile.TarInfo(name); info.size = len(data); info.mtime = 1700000000.25
            t.addfile(info, io.BytesIO(data))
# 1: GNU tar from files on disk whose paths pass 100 bytes.
os.makedirs('gnu/' + 'g' * 120)
for i in range(third, 2 * third):
    for name, data in members(keys[i]):
        with open('gnu/' + 'g' * 120 + '/' + name, 'wb') as f: f.write(data)
subprocess.run(['tar', '--format=gnu', '--sort=name', '-cf', 'shard-1.tar', '-C', 'gnu', '.'], check=True)
# 2: ustar, also compressed.
with tarfile.open('shard-2.tar', 'w', format=tarfile.USTAR_FORMAT) as t:
    for i in range(2 * third, n):
        for name, data in members(keys[i]):
            info = tarfile.TarInfo(name); info.size = len(data)
            t.addfile(info, io.BytesIO(data))
subprocess.run(['zstd', '-q', '-k', 'shard-2.tar'], check=True)
)PY";

// Reads archives with tarfile and groups their regular members into samples
// by webdataset's key rule (its regular expression). `check.py IN... --
// OUT... [-- OUT...]...`: for each list of outputs (one dataset: an archive
// or all of its pieces), every member of every output read whole, the
// outputs' samples byte for byte (headers included) the inputs', each
// exactly once; prints a line of the outputs' keys in order per list, and on
// stderr a line per list of the number of samples of each output. One run
// checks several datasets of the same inputs: the inputs, 33 MB, are read
// once.
const char* const kCheck = R"PY(
import re, sys, tarfile
def key_of(name):
    m = re.match(r'^((?:.*/|)[^.]+)[.]([^/]*)$', name)
    return m.group(1) if m else name
def samples(path):
    raw = open(path, 'rb').read()
    out = []
    with tarfile.open(path) as t:
        for m in t:
            if not m.isreg(): continue
            data = t.extractfile(m).read()
            if len(data) != m.size: sys.exit('short member %s in %s' % (m.name, path))
            end = m.offset_data + (m.size + 511) // 512 * 512
            k = key_of(m.name)
            if out and out[-1][0] == k: out[-1][1].append(raw[m.offset:end])
            else: out.append((k, [raw[m.offset:end]]))
    return [(k, b''.join(parts)) for k, parts in out]
lists = [[]]
for arg in sys.argv[1:]:
    if arg == '--': lists.append([])
    else: lists[-1].append(arg)
if len(lists) < 2: sys.exit('no outputs after --')
inputs = [s for p in lists[0] for s in samples(p)]
if len(set(k for k, _ in inputs)) != len(inputs): sys.exit('input keys repeat')
expected = sorted(inputs)
for paths in lists[1:]:
    per_output = [samples(p) for p in paths]
    outputs = [s for one in per_output for s in one]
    if sorted(outputs) != expected:
        sys.exit('%s: samples differ: %d in, %d out, %d distinct out' %
                 (' '.join(paths), len(inputs), len(outputs), len(set(outputs))))
    print(' '.join(k[-7:] for k, _ in outputs))
    print(' '.join(str(len(one)) for one in per_output), file=sys.stderr)
)PY";

class TarCli : public ::testing::Test {
 protected:
  // The archives are made by Python's tarfile, GNU tar and the zstd tool,
  // and read back by tarfile: without them every test of the suite skips.
  static std::string missing() { return missing_tools({"python3", "tar", "zstd"}); }
  static void SetUpTestSuite() {
    if (!missing().empty()) return;
    dir_ = new TempDir;
    write_file(*dir_ / "check.py", kCheck);
    const std::filesystem::path made = shared_dataset();
    if (made.empty() || made == dir_->path()) return;  // failed (already reported), or made here
    for (const char* name : {"shard-0.tar", "shard-1.tar", "shard-2.tar", "shard-2.tar.zst"}) {
      std::filesystem::create_symlink(made / name, *dir_ / name);
    }
  }
  // The dataset, made once for every test of the suite: each test is a
  // process of its own (ctest runs them apart), and making it was 1.2 CPU-s
  // a test. It is the same on every run (seed 11), so it is kept beside the
  // test executable, in a folder named for the script and the sample count,
  // made whole under a lock (flock: the others wait for it, not for a time)
  // and renamed into place; where that folder cannot be written (a read-only
  // bundle), the test's own directory holds it. Tests only read it.
  static std::filesystem::path shared_dataset() {
    std::error_code error;
    const std::filesystem::path home = std::filesystem::read_symlink("/proc/self/exe", error).parent_path();
    char name[64];
    std::snprintf(name, sizeof name, "tar_cli_dataset-%016zx-%d", std::hash<std::string>{}(kMakeDataset), kSamples);
    const std::filesystem::path shared = home / name;
    const int lock = error ? -1 : ::open((home / "tar_cli_dataset.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (lock < 0) return make_dataset(dir_->path());
    ::flock(lock, LOCK_EX);
    std::filesystem::path made = shared;
    if (!std::filesystem::exists(shared)) {
      const std::filesystem::path partial = home / (std::string(name) + ".partial");
      std::filesystem::remove_all(partial);
      std::filesystem::create_directory(partial);
      made = make_dataset(partial);
      if (!made.empty()) std::filesystem::rename(partial, shared);
      made = made.empty() ? made : shared;
    }
    ::close(lock);  // releases the lock
    return made;
  }
  // Runs make.py in `directory`: the directory, or empty when it failed.
  static std::filesystem::path make_dataset(const std::filesystem::path& directory) {
    write_file(directory / "make.py", kMakeDataset);
    const auto r =
        run_command("cd " + directory.string() + " && /usr/bin/python3 make.py 11 " + std::to_string(kSamples));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.exit_code == 0 ? directory : std::filesystem::path();
  }
  void SetUp() override {
    if (const std::string why = missing(); !why.empty()) GTEST_SKIP() << why;
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  static std::string in_dir(const std::string& command) { return "cd " + dir_->path().string() + " && " + command; }
  static CommandResult shuffle(const std::string& options) { return run_command(in_dir(kBinary + " " + options)); }
  // check.py over the inputs and each of `datasets` (a list of outputs
  // each): each one's keys as a line, or a failure; `counts`, when given,
  // gets each output's number of samples, dataset by dataset.
  static std::vector<std::string> keys_of_each(const std::vector<std::string>& datasets,
                                               std::vector<std::vector<std::size_t>>* counts = nullptr) {
    std::string lists;
    for (const std::string& outputs : datasets) lists += " -- " + outputs;
    const auto r = run_command(in_dir("/usr/bin/python3 check.py shard-0.tar shard-1.tar shard-2.tar" + lists));
    EXPECT_EQ(r.exit_code, 0) << lists << ": " << r.err;
    std::vector<std::string> keys;
    std::istringstream lines(r.out), count_lines(r.err);
    for (std::string line; std::getline(lines, line);) keys.push_back(line + "\n");
    for (std::string line; counts != nullptr && std::getline(count_lines, line);) {
      std::istringstream numbers(line);
      counts->emplace_back();
      for (std::size_t count = 0; numbers >> count;) counts->back().push_back(count);
    }
    keys.resize(datasets.size());  // a failed check: empty lines, already reported
    return keys;
  }
  // check.py over the inputs and `outputs` (one dataset): its keys.
  static std::string keys_of(const std::string& outputs) { return keys_of_each({outputs})[0]; }
  static constexpr int kSamples = 2400;
  static TempDir* dir_;
  const std::string kInputs = "shard-0.tar shard-1.tar shard-2.tar.zst";
};
TempDir* TarCli::dir_ = nullptr;

TEST_F(TarCli, EverySampleWholeAndOnceInTheOrderLinesTake) {
  const auto r = shuffle("--seed 5 --verify --stats " + kInputs + " -o out.tar");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("RESULT records=" + std::to_string(kSamples) + " "), std::string::npos) << r.err;
  const std::string keys = keys_of("out.tar");
  // The order: P(5, N) as N numbered lines take it (the key of sample i is i).
  const auto lines = run_command(kBinary + " --seed 5 -i 0-" + std::to_string(kSamples - 1));
  ASSERT_EQ(lines.exit_code, 0);
  std::string expected;
  for (std::size_t at = 0; at < lines.out.size();) {
    const std::size_t end = lines.out.find('\n', at);
    char key[16];
    std::snprintf(key, sizeof key, "%06llu", std::stoull(lines.out.substr(at, end - at)));
    expected += std::string(expected.empty() ? "" : " ") + "s" + key;
    at = end + 1;
  }
  EXPECT_SAME_BYTES(keys, expected + "\n");
  // GNU tar lists it; every regular member is there (the GNU shard's directories are not).
  const auto listed = run_command(in_dir("tar tvf out.tar | grep -c '^-'"));
  const auto members = run_command(in_dir("(tar tvf shard-0.tar; tar tvf shard-1.tar; tar tvf shard-2.tar) | grep -c '^-'"));
  ASSERT_EQ(listed.exit_code, 0);
  EXPECT_SAME_BYTES(listed.out, members.out);
  // Ends with its own trailer, two zero blocks, after a whole number of blocks.
  const std::string out = read_file(*dir_ / "out.tar");
  ASSERT_EQ(out.size() % 512, 0u);
  EXPECT_SAME_BYTES(out.substr(out.size() - 1024), std::string(1024, '\0'));
}

TEST_F(TarCli, SameSeedSameBytesAtAnyBudgetAndThroughScratchSpace) {
  // In RAM; through scratch space at 4 MiB (the one leaf, 33 MB, placed
  // window by window); and the testing knobs' four levels at two budgets.
  ASSERT_EQ(shuffle("--seed 9 " + kInputs + " -o ram.tar").exit_code, 0);
  const auto small = shuffle("--seed 9 --stats -S 4M " + kInputs + " -o small.tar");
  ASSERT_EQ(small.exit_code, 0) << small.err;
  EXPECT_EQ(small.err.find("passes=1 "), std::string::npos) << small.err;  // the 33 MB leaf goes by windows
  EXPECT_SAME_BYTES(read_file(*dir_ / "ram.tar"), read_file(*dir_ / "small.tar"));
  const std::string knobs = "--seed 9 --leaf-records 64 --fanout 4 -j 2 " + kInputs;
  const auto a = shuffle(knobs + " --stats -o knobs-a.tar");
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_NE(a.err.find("levels=4"), std::string::npos) << a.err;
  ASSERT_EQ(shuffle(knobs + " -S 4M -o knobs-b.tar").exit_code, 0);
  EXPECT_SAME_BYTES(read_file(*dir_ / "knobs-a.tar"), read_file(*dir_ / "knobs-b.tar"));
  keys_of("knobs-b.tar");
}

TEST_F(TarCli, ShardsAreValidArchivesWhoseSamplesConcatenateToTheWhole) {
  ASSERT_EQ(shuffle("--seed 4 " + kInputs + " -o whole.tar").exit_code, 0);
  const auto r = shuffle("--seed 4 --shards 5 " + kInputs + " -o 'train-{shard}.tar' --manifest m.json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string pieces;
  for (int k = 0; k < 5; ++k) pieces += "train-0000" + std::to_string(k) + ".tar ";
  const auto listed =
      run_command(in_dir("for p in " + pieces + "; do tar tf $p > /dev/null || { echo $p; exit 1; }; done"));
  EXPECT_EQ(listed.exit_code, 0) << "GNU tar cannot list " << listed.out;
  EXPECT_NE(read_file(*dir_ / "m.json").find("\"format\": \"tar\""), std::string::npos)
      << "m.json does not name the format";
  // By size: every piece at most 1 MiB of samples (its trailer apart) unless
  // one sample is larger; compressed pieces read back alike.
  ASSERT_EQ(shuffle("--seed 4 --shard-size 1M " + kInputs + " -o 'sz-{shard}.tar.gz'").exit_code, 0);
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir_->path())) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("sz-", 0) == 0 && name.ends_with(".tar.gz")) names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  ASSERT_GE(names.size(), 2u);
  std::string sized;
  for (const std::string& name : names) {
    ASSERT_EQ(run_command(in_dir("gzip -dc " + name + " > " + name + ".tar")).exit_code, 0);
    sized += name + ".tar ";
  }
  // One check of the three datasets: the whole, its 5 pieces, its pieces by size.
  std::vector<std::vector<std::size_t>> counts;
  const std::vector<std::string> keys = keys_of_each({"whole.tar", pieces, sized}, &counts);
  ASSERT_EQ(counts.size(), 3u);
  const std::string& whole = keys[0];
  EXPECT_SAME_BYTES(keys[1], whole);
  // Near-equal sample counts: N / 5 each.
  EXPECT_EQ(counts[1], std::vector<std::size_t>(5, kSamples / 5));
  EXPECT_SAME_BYTES(keys[2], whole);
  const std::vector<std::size_t>& samples = counts[2];
  ASSERT_EQ(samples.size(), names.size());
  for (std::size_t k = 0; k < names.size(); ++k) {
    const std::string name = names[k] + ".tar";
    const auto size = std::filesystem::file_size(*dir_ / name);
    // The samples' bytes (the trailer apart) within 1 MiB, unless one sample
    // is larger; every piece but the last ends only because the next sample
    // would not fit, and samples over 640 KiB need two members of 256-512 KiB
    // (the dataset is the same on every run: seed 11).
    EXPECT_TRUE(size - 1024 <= (std::uint64_t{1} << 20) || samples[k] == 1) << name << " " << size;
    if (k + 1 < names.size()) {
      EXPECT_GT(size - 1024, std::uint64_t{3} << 17) << name;
    }
  }
}

TEST_F(TarCli, EmptyArchivesAndHeadCountGiveValidArchives) {
  ASSERT_EQ(run_command(in_dir("head -c 10240 /dev/zero > empty.tar")).exit_code, 0);
  ASSERT_EQ(shuffle("--seed 1 empty.tar -o e.tar").exit_code, 0);
  EXPECT_SAME_BYTES(read_file(*dir_ / "e.tar"), std::string(1024, '\0'));
  ASSERT_EQ(shuffle("--seed 1 -n 0 shard-2.tar -o n0.tar").exit_code, 0);
  EXPECT_SAME_BYTES(read_file(*dir_ / "n0.tar"), std::string(1024, '\0'));
  ASSERT_EQ(shuffle("--seed 1 -n 3 shard-2.tar -o n3.tar").exit_code, 0);
  const auto r = run_command(in_dir("/usr/bin/python3 check.py n3.tar -- n3.tar"));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), ' '), 2) << r.out;
  // --format tar for a name without the extension; GNU tar's two directory
  // members ('./' and the long one) are skipped, said under -v.
  const auto v = shuffle("--seed 1 --format tar -v shard-1.tar -o plain.out");
  ASSERT_EQ(v.exit_code, 0) << v.err;
  EXPECT_NE(v.err.find("tar: 2 members that are not regular files"), std::string::npos) << v.err;
  // An archive without its trailer (every zero block cut off) gives the same output.
  std::string shard = read_file(*dir_ / "shard-2.tar");
  while (shard.size() >= 512 && shard.substr(shard.size() - 512) == std::string(512, '\0')) shard.resize(shard.size() - 512);
  write_file(*dir_ / "no-trailer.tar", shard);
  ASSERT_EQ(shuffle("--seed 1 no-trailer.tar -o a.tar").exit_code, 0);
  ASSERT_EQ(shuffle("--seed 1 shard-2.tar -o b.tar").exit_code, 0);
  EXPECT_SAME_BYTES(read_file(*dir_ / "a.tar"), read_file(*dir_ / "b.tar"));
  // Standard input, and --dry-run, read tar too.
  const auto piped = run_command(in_dir("cat shard-2.tar | " + kBinary + " --seed 1 --format tar > c.tar"));
  ASSERT_EQ(piped.exit_code, 0) << piped.err;
  EXPECT_SAME_BYTES(read_file(*dir_ / "c.tar"), read_file(*dir_ / "b.tar"));
  EXPECT_EQ(shuffle("--dry-run -S 8M shard-2.tar").exit_code, 0);
}

TEST_F(TarCli, RefusesCorruptTruncatedAndSplitSamplesWithOneLine) {
  const std::string shard = read_file(*dir_ / "shard-2.tar");
  std::string corrupt = shard;
  corrupt[100] ^= 0x01;  // the first header's mode field
  write_file(*dir_ / "corrupt.tar", corrupt);
  auto r = shuffle("--seed 1 corrupt.tar -o bad.tar");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err.find("extshuffle: input 'corrupt.tar': tar header at byte 0: checksum mismatch"), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_FALSE(std::filesystem::exists(*dir_ / "bad.tar"));
  write_file(*dir_ / "cut.tar", shard.substr(0, 3000));
  r = shuffle("--seed 1 cut.tar -o bad.tar");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("is truncated"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(*dir_ / "bad.tar"));
  // A sample split in two: a.jpg, b.jpg, a.txt.
  ASSERT_EQ(run_command(in_dir("mkdir -p split && cd split && echo 1 > a.jpg && echo 2 > b.jpg && echo 3 > a.txt && "
                               "tar -cf ../split.tar a.jpg b.jpg a.txt")).exit_code, 0);
  r = shuffle("--seed 1 --verify split.tar -o bad.tar");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("sample key 'a' at byte 2048 repeats the sample at byte 0"), std::string::npos) << r.err;
  r = shuffle("--seed 1 split.tar -o three.tar");
  EXPECT_EQ(r.exit_code, 0) << r.err;  // without --verify: three samples, as webdataset reads them
  for (const std::string option : {"--header 1", "-z", "--skip-empty", "--repeat -n 3"}) {
    r = shuffle("--seed 1 " + option + " shard-2.tar -o bad.tar");
    EXPECT_EQ(r.exit_code, 2) << option << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

}  // namespace
}  // namespace extshuffle::testing::tar_cli_test
