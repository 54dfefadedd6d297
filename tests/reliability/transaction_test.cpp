// One run, one transaction (docs/conventions.md, The Job and its commit, docs/reliability.md): every file a
// run reads and writes is planned and checked before any work, and its
// outputs are committed together. Each test is a hazard that lost data with
// exit 0 (or late) before the plan: the manifest or an aligned output over
// an input or another output, outputs read back from an input directory,
// names too long for the hidden temporary, more shards than descriptors,
// aligned outputs committed one by one, devices and FIFOs replaced by
// files, a closed standard output.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "reliability_support.hpp"

namespace extshuffle::testing::transaction_test {
namespace {

std::string lines(int first, int count) {
  std::string text;
  for (int k = first; k < first + count; ++k) text += std::to_string(k) + "\n";
  return text;
}

// The same lines, in any order: a permutation of `expected`.
bool same_lines(std::string a, std::string b) {
  auto split = [](const std::string& text) {
    std::vector<std::string> out;
    std::size_t start = 0;
    for (std::size_t end; (end = text.find('\n', start)) != std::string::npos; start = end + 1) {
      out.push_back(text.substr(start, end - start));
    }
    std::sort(out.begin(), out.end());
    return out;
  };
  return split(a) == split(b);
}

std::string shell_quote(const std::string& s) { return "'\\''" + s + "'\\''"; }

class Transaction : public ::testing::Test {
 protected:
  void SetUp() override {
    a_ = (w_.in_dir / "a.txt").string();
    b_ = (w_.in_dir / "b.txt").string();
    write_file(a_, lines(0, 1000));
    write_file(b_, lines(1000, 1000));
  }
  Outcome run(std::vector<std::string> args) {
    args.insert(args.begin(), {"--seed", "5", "-T", w_.tmp_dir.string()});
    return run_binary(args);
  }
  // A refusal before any work: exit 2, one line, inputs intact, nothing written.
  void expect_refused(const Outcome& r, const std::string& pattern) {
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_TRUE(is_one_line_error(r.err, pattern)) << r.err;
    EXPECT_SAME_BYTES(read_file(a_), lines(0, 1000));
    EXPECT_SAME_BYTES(read_file(b_), lines(1000, 1000));
    EXPECT_EQ(entries(w_.out_dir), std::vector<std::string>{});
    EXPECT_EQ(entries(w_.tmp_dir), std::vector<std::string>{});
  }
  Workspace w_;
  std::string a_, b_;
};

TEST_F(Transaction, ManifestOverAnInputIsRefused) {
  expect_refused(run({a_, "-o", w_.output(), "--manifest", a_}), "--manifest '.*a\\.txt': is the input");
}

TEST_F(Transaction, ManifestOverASplitOrAShardIsRefused) {
  const std::string out = (w_.out_dir / "{split}.txt").string();
  expect_refused(run({a_, "-o", out, "--split", "train=0.5,val=0.5", "--manifest", (w_.out_dir / "train.txt").string()}),
                 "two writes to one file");
  const std::string shards = (w_.out_dir / "s-{shard}.txt").string();
  expect_refused(run({a_, "-o", shards, "--shards", "3", "--manifest", (w_.out_dir / "s-00001.txt").string()}),
                 "two writes to one file");
}

TEST_F(Transaction, AlignedOutputsOverEachOtherAreRefused) {
  const std::string pattern = (w_.out_dir / "{shard}.txt").string();
  expect_refused(run({a_, b_, "-o", pattern, "-o", pattern, "--shards", "2"}), "two writes to one file");
  // ./x and x, and a hard link, are one file.
  write_file(w_.out_dir / "x.txt", "kept\n");
  std::filesystem::create_hard_link(w_.out_dir / "x.txt", w_.out_dir / "hard.txt");
  const auto r = run({a_, b_, "-o", (w_.out_dir / "x.txt").string(), "-o", (w_.out_dir / "hard.txt").string()});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(is_one_line_error(r.err, "two writes to one file")) << r.err;
  EXPECT_SAME_BYTES(read_file(w_.out_dir / "x.txt"), "kept\n");
}

TEST_F(Transaction, AlignedOutputOverTheOtherInputIsRefused) {
  // Before the plan, b.txt was replaced by a's shuffle before the run failed.
  expect_refused(run({a_, b_, "-o", b_, "-o", a_}), "-o '.*b\\.txt': is the input");
}

TEST_F(Transaction, InPlaceOutputOfOneDatasetStillWorks) {
  const auto r = run({a_, "-o", a_});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_DIFFERENT_BYTES(read_file(a_), lines(0, 1000));
  EXPECT_TRUE(same_lines(read_file(a_), lines(0, 1000)));
  EXPECT_EQ(entries(w_.in_dir), (std::vector<std::string>{"a.txt", "b.txt"}));
}

TEST_F(Transaction, OutputInsideAnInputDirectoryIsRefused) {
  // The next run of the same command would read the shards back in.
  expect_refused(run({w_.in_dir.string(), "-o", (w_.in_dir / "s-{shard}.txt").string(), "--shards", "2"}),
                 "lies in the input directory");
  EXPECT_EQ(entries(w_.in_dir), (std::vector<std::string>{"a.txt", "b.txt"}));
}

TEST_F(Transaction, LongNamesWorkOrFailBeforeAnyWork) {
  // 240 bytes: the destination fits the file system's 255, the hidden
  // temporary (26 bytes more) did not, after the whole shuffle.
  const std::string fits = (w_.out_dir / (std::string(236, 'n') + ".txt")).string();
  auto r = run({a_, "-o", fits});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(same_lines(read_file(fits), lines(0, 1000)));
  std::filesystem::remove(fits);
  const std::string too_long = (w_.out_dir / "s-{shard}-" += std::string(250, 'n')).string();
  r = run({a_, "-o", too_long, "--shards", "2"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(is_one_line_error(r.err, "File name too long")) << r.err;
  EXPECT_EQ(entries(w_.out_dir), std::vector<std::string>{});
  EXPECT_EQ(entries(w_.tmp_dir), std::vector<std::string>{});
}

TEST_F(Transaction, MoreShardsThanDescriptorsFailBeforeAnyWork) {
  // Before: after the whole shuffle, as "Input/output error".
  const std::string pattern = (w_.out_dir / "s-{shard}.txt").string();
  const auto r = run_command("ulimit -n 200 && " + kBinary + " --seed 5 " + shell_quote(a_) + " -o " +
                             shell_quote(pattern) + " --shards 300");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("ulimit -n"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_EQ(entries(w_.out_dir), std::vector<std::string>{});
}

TEST_F(Transaction, AlignedOutputsAreCommittedTogether) {
  // The second output's disk fills up: the first destination must be as it was.
  const auto second = w_.root.path() / "second";
  std::filesystem::create_directory(second);
  const auto second_dir = std::filesystem::canonical(second);
  write_file(w_.out_dir / "a.out", "old a\n");
  write_file(second_dir / "b.out", "old b\n");
  const auto r = run_binary({"--seed", "5", "-T", w_.tmp_dir.string(), a_, b_, "-o", (w_.out_dir / "a.out").string(),
                             "-o", (second_dir / "b.out").string()},
                            fault_environment("enospc", second_dir.string(), 100, w_));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_TRUE(std::filesystem::exists(w_.marker())) << "the fault never fired";
  EXPECT_TRUE(is_one_line_error(r.err, "No space left on device")) << r.err;
  EXPECT_SAME_BYTES(read_file(w_.out_dir / "a.out"), "old a\n") << "the first output was committed alone";
  EXPECT_SAME_BYTES(read_file(second_dir / "b.out"), "old b\n");
  EXPECT_EQ(entries(w_.out_dir), std::vector<std::string>{"a.out"});
  EXPECT_EQ(entries(second_dir), std::vector<std::string>{"b.out"});
}

// A FIFO as -o is written into (its reader gets the records), not replaced.
TEST_F(Transaction, FifoDestinationIsWrittenInto) {
  const auto fifo = w_.out_dir / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // The reader gives up after 20 s: when the FIFO is replaced by a file, no writer ever comes.
  const auto r = run_command("timeout 20 cat " + shell_quote(fifo.string()) + " > " + shell_quote((w_.capture_dir / "got").string()) +
                             " & " + kBinary + " --seed 5 " + shell_quote(a_) + " -o " + shell_quote(fifo.string()) +
                             " && wait");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  struct stat st {};
  ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode)) << "the FIFO was replaced by a file";
  EXPECT_TRUE(same_lines(read_file(w_.capture_dir / "got"), lines(0, 1000)));
}

// /dev/stdout as -o when standard output is a pipe, and --manifest to /dev/stderr.
TEST_F(Transaction, DevStdoutIsWrittenInto) {
  const auto r = run_command(kBinary + " --seed 5 " + shell_quote(a_) + " -o /dev/stdout | cat");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(same_lines(r.out, lines(0, 1000))) << r.err;
}

// A character device as -o and --manifest: written into, never replaced.
// Root makes its own null device with mknod, so that a failure cannot
// replace the machine's /dev/null; a normal user writes /dev/null itself
// (before: "Permission denied").
TEST_F(Transaction, CharacterDevicesAreWrittenInto) {
  std::string device = "/dev/null";
  if (::geteuid() == 0) {
    device = (w_.out_dir / "null").string();
    if (::mknod(device.c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0) GTEST_SKIP() << "mknod is not allowed here";
  }
  const auto r = run({a_, "-o", device, "--manifest", device});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  struct stat st {};
  ASSERT_EQ(::lstat(device.c_str(), &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode)) << device << " was replaced by a file";
  if (::geteuid() == 0) {
    EXPECT_EQ(entries(w_.out_dir), std::vector<std::string>{"null"});
  }
}

// Standard output closed at start: with -o the file is written (before, the
// unnamed temporary became descriptor 1 and the output was lost with exit
// 0); without -o it is a write error, exit 1, as coreutils.
TEST_F(Transaction, ClosedStandardOutput) {
  const std::string out = (w_.out_dir / "o.txt").string();
  auto r = run_command(kBinary + " --seed 5 " + shell_quote(a_) + " -o " + shell_quote(out) + " >&-");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(same_lines(read_file(out), lines(0, 1000)));
  r = run_command(kBinary + " --seed 5 " + shell_quote(a_) + " >&-");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_TRUE(is_one_line_error(r.err, "standard output.*Bad file descriptor")) << r.err;
}

// The racing user of a shared, non-sticky -T: before, the scratch file was
// created exclusively and then opened again by name (by STXXL), following
// a link another user could put there in between, so a root run wrote its
// scratch data into a file of the racer's choosing. The shim swaps the name
// for a link to a victim file at that second open; the scratch file is now
// anonymous and reopened through its descriptor only.
TEST(ScratchRace, NoScratchFileIsOpenedByAName) {
  Workspace w;
  const std::string input = numbered_u64(std::uint64_t{4} << 20);  // 32 MiB: through scratch space with -S 16M
  write_file(w.input(), input);
  std::filesystem::permissions(w.tmp_dir, std::filesystem::perms::all);  // world-writable, not sticky
  const auto victim = w.root.path() / "victim";
  write_file(victim, "the racer's target\n");
  Environment race = fault_environment("none", "/nonexistent", 0, w);
  race["EXTSHUFFLE_RACE_DIR"] = w.tmp_dir.string();
  race["EXTSHUFFLE_RACE_VICTIM"] = victim.string();
  const auto r = run_binary({"--record-size", "8", "--seed", "3", "-S", "16M", "-T", w.tmp_dir.string(), w.input(),
                             w.output()},
                            race);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_SAME_BYTES(read_file(victim), "the racer's target\n") << "scratch data went into the racer's file";
  auto got = u64_indices(read_file(w.output()));
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, u64_indices(input));
  EXPECT_EQ(entries(w.tmp_dir), std::vector<std::string>{});
}

// -o through another user's link in a sticky world-writable directory
// (/tmp): open(2) refuses to follow it (protected_symlinks), and so does the
// run, which used to resolve it by hand and rename over its target.
TEST(ScratchRace, AnotherUsersLinkInAStickyDirectoryIsNotFollowed) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give the link to another user";
  Workspace w;
  write_file(w.input(), numbered_u64(1000));
  const auto sticky = w.root.path() / "sticky";
  std::filesystem::create_directory(sticky);
  ASSERT_EQ(::chmod(sticky.c_str(), 01777), 0);
  const auto victim = w.root.path() / "victim";
  write_file(victim, "not yours\n");
  const auto link = sticky / "out.bin";
  std::filesystem::create_symlink(victim, link);
  ASSERT_EQ(::lchown(link.c_str(), 65534, 65534), 0);
  const auto r = run_binary({"--record-size", "8", "-T", w.tmp_dir.string(), w.input(), link.string()});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_TRUE(is_one_line_error(r.err, "cannot write output '.*out\\.bin': Permission denied")) << r.err;
  EXPECT_SAME_BYTES(read_file(victim), "not yours\n");
  // One's own link there is followed, as open(2) would.
  ASSERT_EQ(::lchown(link.c_str(), 0, 0), 0);
  EXPECT_EQ(run_binary({"--record-size", "8", "-T", w.tmp_dir.string(), w.input(), link.string()}).exit_code, 0);
  EXPECT_TRUE(std::filesystem::is_symlink(link));
  EXPECT_EQ(read_file(victim).size(), 8000u);
}

// A scratch file system of 64 MiB of its own (tmpfs), for root; usable()
// says whether the mount worked (a container may forbid it).
class SmallScratch {
 public:
  explicit SmallScratch(const std::filesystem::path& path) : path_(path) {
    std::filesystem::create_directory(path_);
    mounted_ = ::geteuid() == 0 &&
               std::system(("mount -t tmpfs -o size=64m tmpfs '" + path_.string() + "' 2>/dev/null").c_str()) == 0;
  }
  ~SmallScratch() {
    if (mounted_) (void)std::system(("umount '" + path_.string() + "'").c_str());
  }
  bool usable() const { return mounted_; }

 private:
  std::filesystem::path path_;
  bool mounted_ = false;
};

// Spooling an endless input stops before -T's file system is down to its
// reserve (it spooled until the disk was full), and a run whose scratch
// need is known is refused before it starts, naming both figures (it
// failed with ENOSPC after the work).
TEST(BoundedScratch, SpoolingStopsAtTheReserveAndKnownNeedsAreRefusedUpFront) {
  Workspace w;
  SmallScratch small(w.root.path() / "small");
  if (!small.usable()) GTEST_SKIP() << "needs root and mount(8) for a 64 MiB tmpfs";
  const std::string tmp = (w.root.path() / "small").string();
  auto r = run_binary({"-T", tmp, "-n", "5", "/dev/zero"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_TRUE(is_one_line_error(r.err, "input '/dev/zero': spooling stopped after [0-9]+ bytes: .*reserve")) << r.err;
  r = run_binary({"-T", tmp, "-i", "1-4503599627370496"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_TRUE(is_one_line_error(r.err, "-i 1-4503599627370496: needs at least 36028797018963968 bytes of scratch "
                                       "space, but '.*small' has [0-9]+ bytes to spare"))
      << r.err;
  EXPECT_EQ(r.out, "");
  write_file(w.input(), numbered_u64(10000000));  // 80 MB, through disk with -S 16M
  r = run_binary({"--record-size", "8", "-S", "16M", "-T", tmp, w.input(), w.output()});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_TRUE(is_one_line_error(r.err, "the shuffle: needs at least 80000000 bytes of scratch space")) << r.err;
  EXPECT_EQ(entries(w.out_dir), std::vector<std::string>{});
  EXPECT_EQ(entries(tmp), std::vector<std::string>{});
}

// Memory exhausted late in a run (ulimit -v): STXXL started its output
// queue's thread at the first output write and, when that thread could not
// start, aborted on an assertion (exit 134). Every limit across the range
// where the run runs out now ends with exit 1 (or succeeds), never an abort.
TEST(BoundedMemory, ExhaustionNeverAborts) {
  if (binary_is_sanitized()) GTEST_SKIP() << "AddressSanitizer reserves terabytes of address space";
  Workspace w;
  std::string text;
  for (int k = 0; k < 3000000; ++k) text += std::to_string(k) + "\n";
  write_file(w.input(), text);
  int failures = 0;
  for (int kib = 30000; kib <= 110000; kib += 8000) {
    SCOPED_TRACE(kib);
    const auto r = run_command("ulimit -v " + std::to_string(kib) + " && " + kBinary + " -S 16M -T " +
                               w.tmp_dir.string() + " " + w.input() + " -o " + w.output());
    EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.exit_code << ": " << r.err;
    if (r.exit_code == 1) {
      EXPECT_TRUE(is_one_line_error(r.err, "out of memory: .*")) << r.err;
      ++failures;
    }
    EXPECT_EQ(entries(w.tmp_dir), std::vector<std::string>{});
  }
  EXPECT_GT(failures, 0) << "no limit in the range ran out of memory: the test proves nothing";
}

// A thread that cannot start at all: with a 1 GB stack limit every thread's
// stack (pthread's default size is the limit) is beyond a 600 MB address
// space, so the first IO thread fails, every time. STXXL aborted on it
// (exit 134).
TEST(BoundedMemory, NoThreadCanStartIsOutOfMemory) {
  if (binary_is_sanitized()) GTEST_SKIP() << "AddressSanitizer reserves terabytes of address space";
  Workspace w;
  write_file(w.input(), "a\nb\nc\n");
  const auto r =
      run_command("ulimit -s 1000000 && ulimit -v 600000 && " + kBinary + " " + w.input() + " -o " + w.output());
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_TRUE(is_one_line_error(r.err, "out of memory: .*")) << r.err;
  EXPECT_EQ(entries(w.out_dir), std::vector<std::string>{});
}

}  // namespace
}  // namespace extshuffle::testing::transaction_test
