// Bad and tricky paths: a scratch directory that cannot be used, a
// destination that cannot be written, an input that is a directory, and an
// output that is the input under another name (symbolic or hard link). A
// bad path fails before any work with exit 1 and one line naming it; an
// alias of the input is written safely: the input's data is never modified
// in place, the output is the correct shuffle, and nothing else is left.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <functional>

#include "reliability_support.hpp"

namespace extshuffle::testing::path_safety_test {
namespace {

constexpr std::uint64_t kRecords = 100000;
constexpr std::uint64_t kAliasRecords = std::uint64_t{2} << 20;

// A directory where no file can be created, even by root: chmod for a
// normal user; for root (CI runs as root) the immutable attribute
// (chattr +i, ext4 and most Linux file systems, needs CAP_LINUX_IMMUTABLE).
// usable() says whether either worked, checked by trying to create a file.
class UnwritableDirectory {
 public:
  explicit UnwritableDirectory(const std::filesystem::path& path) : path_(path) {
    std::filesystem::create_directory(path_);
    root_ = ::geteuid() == 0;
    if (root_) {
      immutable_ = std::system(("chattr +i '" + path_.string() + "' 2>/dev/null").c_str()) == 0;
    } else {
      std::filesystem::permissions(path_, std::filesystem::perms::owner_read | std::filesystem::perms::owner_exec);
    }
    const std::filesystem::path probe = path_ / "probe";
    const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
    usable_ = fd < 0;
    if (fd >= 0) {
      ::close(fd);
      std::filesystem::remove(probe);
    }
  }
  ~UnwritableDirectory() {
    if (immutable_) (void)std::system(("chattr -i '" + path_.string() + "' 2>/dev/null").c_str());
    if (!root_) std::filesystem::permissions(path_, std::filesystem::perms::owner_all);
  }
  bool usable() const { return usable_; }

 private:
  std::filesystem::path path_;
  bool root_ = false, immutable_ = false, usable_ = false;
};

struct BadPath {
  std::string name;
  // Prepares the workspace and returns the arguments (files and -T) of the run.
  std::function<std::vector<std::string>(Workspace&)> setup;
  std::string message;  // a regular expression for the one-line message
  // 1: found when the run starts (scratch space); 2: refused by the Job's
  // plan of every file, before any work (docs/cli.md, "Safety").
  int exit_code = 1;
};

TEST(PathSafety, BadPathsFailBeforeAnyWorkAndLeaveNothing) {
  const std::vector<BadPath> cases = {
      {"--tmpdir is a regular file",
       [](Workspace& w) {
         write_file(w.root.path() / "not-a-dir", "x");
         return std::vector<std::string>{"-T", (w.root.path() / "not-a-dir").string(), w.input(), w.output()};
       },
       "cannot use scratch directory '.*not-a-dir': Not a directory"},
      {"--tmpdir does not exist",
       [](Workspace& w) {
         return std::vector<std::string>{"-T", (w.root.path() / "missing").string(), w.input(), w.output()};
       },
       "cannot use scratch directory '.*missing': No such file or directory"},
      {"--tmpdir under a regular file",
       [](Workspace& w) {
         write_file(w.root.path() / "file", "x");
         return std::vector<std::string>{"-T", (w.root.path() / "file" / "sub").string(), w.input(), w.output()};
       },
       "cannot use scratch directory '.*file/sub': Not a directory"},
      {"output directory missing",
       [](Workspace& w) {
         return std::vector<std::string>{"-T", w.tmp_dir.string(), w.input(), (w.out_dir / "no" / "out.bin").string()};
       },
       "cannot write output '.*no/out\\.bin': No such file or directory", 2},
      {"output path is a directory",
       [](Workspace& w) {
         std::filesystem::create_directory(w.out_dir / "out.bin");
         write_file(w.out_dir / "out.bin" / "keep", "kept");
         return std::vector<std::string>{"-T", w.tmp_dir.string(), w.input(), w.output()};
       },
       "cannot write output '.*out\\.bin': Is a directory", 2},
      {"output's parent is a regular file",
       [](Workspace& w) {
         write_file(w.out_dir / "file", "x");
         return std::vector<std::string>{"-T", w.tmp_dir.string(), w.input(), (w.out_dir / "file" / "out.bin").string()};
       },
       "cannot write output '.*file/out\\.bin': Not a directory", 2},
      // A directory is read as its regular files (docs/cli.md, "Datasets"): one with none is an error.
      {"input is a directory without files",
       [](Workspace& w) {
         std::filesystem::create_directories(w.in_dir / "empty" / "sub");
         return std::vector<std::string>{"-T", w.tmp_dir.string(), (w.in_dir / "empty").string(), w.output()};
       },
       "input directory '.*empty': holds no regular file"},
      {"input missing",
       [](Workspace& w) {
         return std::vector<std::string>{"-T", w.tmp_dir.string(), (w.in_dir / "nope.bin").string(), w.output()};
       },
       "cannot open input '.*nope\\.bin': No such file or directory"},
  };
  for (const BadPath& c : cases) {
    SCOPED_TRACE(c.name);
    Workspace w;
    const std::string input = numbered_u64(kRecords);
    write_file(w.input(), input);
    const auto before_out = entries(w.out_dir);
    std::vector<std::string> args{"--record-size", "8", "--seed", "3"};
    for (std::string& a : c.setup(w)) args.push_back(a);
    const auto after_setup_out = entries(w.out_dir);
    const auto r = run_binary(args);
    EXPECT_EQ(r.exit_code, c.exit_code) << r.err;
    EXPECT_TRUE(is_one_line_error(r.err, c.message)) << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(entries(w.out_dir), after_setup_out) << "something was left beside the destination";
    EXPECT_EQ(entries(w.tmp_dir), std::vector<std::string>{}) << "scratch left";
    EXPECT_SAME_BYTES(read_file(w.input()), input);
  }
}

// A scratch directory and a destination directory nobody may write to.
TEST(PathSafety, UnwritableDirectoriesFailWithTheReason) {
  Workspace w;
  const std::string input = numbered_u64(kRecords);
  write_file(w.input(), input);
  const auto locked = w.root.path() / "locked";
  UnwritableDirectory guard(locked);
  if (!guard.usable()) GTEST_SKIP() << "cannot make a directory unwritable here (root without chattr +i)";
  const std::string why = "(Permission denied|Operation not permitted)";

  auto r = run_binary({"--record-size", "8", "-T", locked.string(), w.input(), w.output()});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_TRUE(is_one_line_error(r.err, "cannot create scratch file in '.*locked': " + why)) << r.err;
  EXPECT_EQ(entries(w.out_dir), std::vector<std::string>{}) << "temporary output left";
  EXPECT_EQ(entries(locked), std::vector<std::string>{});

  r = run_binary({"--record-size", "8", "-T", w.tmp_dir.string(), w.input(), (locked / "out.bin").string()});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_TRUE(is_one_line_error(r.err, "cannot write output '.*locked/out\\.bin': " + why)) << r.err;
  EXPECT_EQ(entries(w.tmp_dir), std::vector<std::string>{});
  EXPECT_SAME_BYTES(read_file(w.input()), input);
}

// A crafted .npy header nested a million levels deep (found by
// fuzz/npy_header_fuzz): it overflowed the stack of the recursive parser and
// the run died with SIGSEGV. Now a one-line error.
TEST(PathSafety, DeeplyNestedNpyHeaderIsAnErrorNotACrash) {
  Workspace w;
  const std::string dict = "{'descr': " + std::string(1000000, '[');
  std::string header("\x93NUMPY\x02\x00", 8);
  for (int k = 0; k < 4; ++k) header += static_cast<char>((dict.size() >> (8 * k)) & 0xFF);
  write_file(w.input(), header + dict);
  const auto r = run_binary({"-T", w.tmp_dir.string(), w.input(), w.output()});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_TRUE(is_one_line_error(r.err, "malformed \\.npy header: nested more than 64 levels deep")) << r.err;
  EXPECT_EQ(entries(w.out_dir), std::vector<std::string>{});
  EXPECT_EQ(entries(w.tmp_dir), std::vector<std::string>{});
}

class InputAlias : public ::testing::Test {
 protected:
  void SetUp() override {
    input_ = numbered_u64(kAliasRecords);
    write_file(w_.input(), input_);
    // The expected output, from a copy that shares nothing with the input.
    write_file(w_.capture_dir / "copy.bin", input_);
    const auto r = run_binary({"--record-size", "8", "--seed", "3", "-S", "16M", "-T", w_.tmp_dir.string(),
                               (w_.capture_dir / "copy.bin").string(), (w_.capture_dir / "expected.bin").string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    expected_ = read_file(w_.capture_dir / "expected.bin");
  }
  // -S 16M: the 16 MiB input streams through scratch space (two passes).
  Outcome shuffle(const std::string& in, const std::string& out) {
    return run_binary({"--record-size", "8", "--seed", "3", "-S", "16M", "-T", w_.tmp_dir.string(), in, out});
  }
  Workspace w_;
  std::string input_, expected_;
};

// `extshuffle in.bin link.bin` where link.bin -> in.bin: as with shuf -o and
// sort -o, the output goes to the link's target, so in.bin is replaced by its
// own shuffle (renamed over it at the end, atomically) and the link stays a link.
TEST_F(InputAlias, OutputIsASymlinkToTheInput) {
  std::filesystem::create_symlink(w_.input(), w_.in_dir / "link.bin");
  const auto r = shuffle(w_.input(), (w_.in_dir / "link.bin").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_TRUE(read_file(w_.input()) == expected_) << "the link's target does not hold the output";
  EXPECT_TRUE(std::filesystem::is_symlink(w_.in_dir / "link.bin")) << "the link was replaced";
  EXPECT_EQ(entries(w_.in_dir), (std::vector<std::string>{"in.bin", "link.bin"}));
  EXPECT_EQ(entries(w_.tmp_dir), std::vector<std::string>{});
}

// `extshuffle in.bin twin.bin` where twin.bin is a hard link of in.bin: the
// output gets a new inode under twin.bin; in.bin keeps the original data.
TEST_F(InputAlias, OutputIsAHardLinkOfTheInput) {
  std::filesystem::create_hard_link(w_.input(), w_.in_dir / "twin.bin");
  const auto r = shuffle(w_.input(), (w_.in_dir / "twin.bin").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_SAME_BYTES(read_file(w_.input()), input_) << "the input was modified through the hard link";
  EXPECT_SAME_BYTES(read_file(w_.in_dir / "twin.bin"), expected_);
  EXPECT_EQ(std::filesystem::hard_link_count(w_.input()), 1u);
  EXPECT_EQ(entries(w_.in_dir), (std::vector<std::string>{"in.bin", "twin.bin"}));
  EXPECT_EQ(entries(w_.tmp_dir), std::vector<std::string>{});
}

// The input is a symlink to the output path: the output (the link's
// target) is replaced by the shuffle of its own previous contents.
TEST_F(InputAlias, InputIsASymlinkToTheOutput) {
  std::filesystem::create_symlink(w_.input(), w_.out_dir / "alias.bin");
  const auto r = shuffle((w_.out_dir / "alias.bin").string(), w_.input());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_SAME_BYTES(read_file(w_.input()), expected_);
  EXPECT_EQ(entries(w_.in_dir), std::vector<std::string>{"in.bin"}) << "temporary output left";
  EXPECT_EQ(entries(w_.tmp_dir), std::vector<std::string>{});
}

// The same file through a symlinked directory (dir/in.bin and link/in.bin):
// an in-place shuffle, like -o naming the input.
TEST_F(InputAlias, OutputIsTheInputThroughALinkedDirectory) {
  std::filesystem::create_directory_symlink(w_.in_dir, w_.out_dir / "linked");
  const auto r = shuffle(w_.input(), (w_.out_dir / "linked" / "in.bin").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_SAME_BYTES(read_file(w_.input()), expected_);
  EXPECT_EQ(entries(w_.in_dir), std::vector<std::string>{"in.bin"});
  EXPECT_EQ(entries(w_.tmp_dir), std::vector<std::string>{});
}

}  // namespace
}  // namespace extshuffle::testing::path_safety_test
