// The commit's lock (docs/cli.md "The commit", docs/reliability.md): a write
// lock on a lock file beside the files that change, which only someone who
// may write there can open for writing. Another user who can only read the
// directory held the old lock (a flock on the directory) forever and every
// run into it finished its shuffle and waited, silently; now such a user
// stops nothing. A run that waits for another's commit says so once, after
// a second, at every level but -q's; a file system without locks is warned
// of. Every wait here is on an event (a marker the holder writes, the
// run's own message, the kernel's /proc/locks), never on the clock.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>

#include "reliability_support.hpp"

namespace extshuffle::testing::commit_lock_test {
namespace {

namespace fs = std::filesystem;

const std::string kOther = "extshuffle-other";

std::string lines(int count) {
  std::string text;
  for (int k = 1; k <= count; ++k) text += std::to_string(k) + "\n";
  return text;
}

// The commit's lock of `file`, held by this process (an open file
// description lock, as the run takes it) until destroyed.
class HeldLock {
 public:
  explicit HeldLock(const fs::path& lock_file) {
    fd_ = ::open(lock_file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    struct flock whole {};
    whole.l_type = F_WRLCK;
    whole.l_whence = SEEK_SET;
    held_ = fd_ >= 0 && ::fcntl(fd_, F_OFD_SETLKW, &whole) == 0;
    struct stat st {};
    if (fd_ >= 0 && ::fstat(fd_, &st) == 0) inode_ = st.st_ino;
  }
  ~HeldLock() { release(); }
  bool held() const { return held_; }
  void release() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  // Whether another open file description waits for this lock: the
  // kernel's list of locks shows its blocked request ("->").
  bool someone_waits() const {
    std::ifstream locks("/proc/locks");
    const std::string inode = ":" + std::to_string(inode_) + " ";
    for (std::string line; std::getline(locks, line);) {
      if (line.find("->") != std::string::npos && line.find(inode) != std::string::npos) return true;
    }
    return false;
  }

 private:
  int fd_ = -1;
  bool held_ = false;
  ino_t inode_ = 0;
};

class CommitLockCli : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = fs::canonical(root_.path());
    write_file(base_ / "in.txt", lines(1000));
  }
  std::string out() const { return (base_ / "out.txt").string(); }
  fs::path lock_file() const { return base_ / ".out.txt.extshuffle-lock"; }
  TempDir root_;
  fs::path base_;
};

TEST_F(CommitLockCli, AWaitIsSaidOnceAndTheRunCommitsWhenTheLockIsFree) {
  write_file(out(), "old\n");
  for (const std::string verbosity : {"", "-v"}) {
    SCOPED_TRACE(verbosity);
    HeldLock lock(lock_file());
    ASSERT_TRUE(lock.held());
    std::vector<std::string> arguments{base_ / "in.txt", "-o", out(), "--seed", "3"};
    if (!verbosity.empty()) arguments.push_back(verbosity);
    const TempDir capture;  // its own: no earlier run's words to find
    Child run(arguments, {}, capture.path());
    const std::string said = "extshuffle: waiting for another run's commit into '" + out() +
                             "' to end (it holds the commit lock '" + base_.string() + "/.out.txt.extshuffle-lock')\n";
    ASSERT_TRUE(wait_for_event([&] { return run.err().find(said) != std::string::npos || !run.running(); },
                               [] { return true; }))
        << run.err();
    EXPECT_TRUE(run.running()) << "the run ended while another held the lock: " << run.err();
    EXPECT_SAME_BYTES(read_file(out()), "old\n");  // nothing published while the lock is held
    lock.release();
    EXPECT_EQ(run.wait(), 0) << run.err();
    EXPECT_EQ(read_file(out()).size(), lines(1000).size());
    const std::string err = run.err();
    EXPECT_EQ(err.find(said), err.rfind(said)) << "said more than once: " << err;
    if (verbosity.empty()) {
      EXPECT_EQ(err, said);
    }
    EXPECT_FALSE(fs::exists(lock_file())) << "the lock file outlived the commit";
    write_file(out(), "old\n");
  }
  // -q: nothing said; the run waits all the same (the kernel shows its request).
  HeldLock lock(lock_file());
  ASSERT_TRUE(lock.held());
  const TempDir capture;
  Child quiet({"-q", base_ / "in.txt", "-o", out()}, {}, capture.path());
  ASSERT_TRUE(wait_for_event([&] { return lock.someone_waits() || !quiet.running(); }, [] { return true; }));
  EXPECT_TRUE(quiet.running()) << quiet.err();
  EXPECT_SAME_BYTES(read_file(out()), "old\n");
  lock.release();
  EXPECT_EQ(quiet.wait(), 0) << quiet.err();
  EXPECT_EQ(quiet.err(), "");
}

TEST_F(CommitLockCli, AFileSystemWithoutLocksIsWarnedOf) {
  Workspace w;
  write_file(w.input(), lines(100));
  for (const std::string quiet : {"", "-q"}) {
    Environment no_locks = fault_environment("no-locks", w.out_dir.string(), 0, w);
    std::vector<std::string> arguments{w.input(), "-o", w.output()};
    if (!quiet.empty()) arguments.push_back(quiet);
    const auto r = run_binary(arguments, no_locks);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(fs::exists(w.marker())) << "the fault never fired";
    EXPECT_EQ(r.err, "extshuffle: warning: the file system of '" + w.out_dir.string() +
                         "/' takes no locks: this commit into '" + w.output() +
                         "' is not ordered with other runs into the same files\n");
    EXPECT_EQ(read_file(w.output()).size(), lines(100).size());
    EXPECT_EQ(entries(w.out_dir), std::vector<std::string>{"out.bin"});
    fs::remove(w.marker());
  }
}

// Another user: created for the test (as root; skipped otherwise).
bool other_user_exists() {
  if (::geteuid() != 0) return false;
  return run_command("id -u " + kOther + " || useradd --system --no-create-home --shell /usr/sbin/nologin " + kOther)
                 .exit_code == 0 &&
         run_command("command -v runuser && command -v flock").exit_code == 0;
}

TEST_F(CommitLockCli, AnotherUserWhoCanOnlyReadTheDirectoryStopsNoRun) {
  if (!other_user_exists()) GTEST_SKIP() << "needs root, useradd, runuser and flock for a second user";
  // The directory (and the way to it) readable by the other user, writable by root alone.
  ASSERT_EQ(::chmod(root_.path().c_str(), 0755), 0);
  for (fs::path up = base_.parent_path(); up != up.root_path(); up = up.parent_path()) {
    struct stat st {};
    if (::stat(up.c_str(), &st) != 0 || (st.st_mode & S_IXOTH) == 0) GTEST_SKIP() << up << " is closed to other users";
  }
  const fs::path signals = base_ / "signals";
  fs::create_directory(signals);
  ASSERT_EQ(::chmod(signals.c_str(), 0777), 0);
  const fs::path marker = signals / "held";
  // The old lock: an flock on the directory, which any reader can take.
  const auto holder =
      run_command("runuser -u " + kOther + " -- flock -x " + base_.string() + " sh -c \"echo \\$\\$ > " +
                  marker.string() + " && exec sleep 600\" > /dev/null 2>&1 & echo $!");
  ASSERT_EQ(holder.exit_code, 0);
  ASSERT_TRUE(wait_for_file(marker)) << "the other user could not take the directory's flock";
  ASSERT_TRUE(wait_for_event([&] { return !read_file(marker).empty(); }, [] { return true; }));
  const auto r = run_command("timeout 120 " + kBinary + " " + (base_ / "in.txt").string() + " -o " + out());
  run_command("kill " + read_file(marker));  // the holder's shell became sleep
  EXPECT_EQ(r.exit_code, 0) << "a reader's lock stopped the run: " << r.err;
  EXPECT_EQ(read_file(out()).size(), lines(1000).size());
  // The lock file a run killed inside its commit leaves: its user's alone,
  // so the other user cannot even open it, and the next run takes it.
  if (run_command("command -v strace").exit_code != 0) GTEST_SKIP() << "strace is not installed (the rest needs it)";
  const auto killed =
      run_command("cd " + base_.string() +
                  " && strace -f -qq -o /dev/null -e trace=renameat -e inject=renameat:signal=KILL:when=1 " + kBinary +
                  " in.txt -o out.txt");
  ASSERT_EQ(killed.exit_code, 137) << killed.err;
  struct stat st {};
  ASSERT_EQ(::stat(lock_file().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  EXPECT_NE(run_command("runuser -u " + kOther + " -- sh -c \": < " + lock_file().string() + "\"").exit_code, 0);
  const auto next = run_command("timeout 120 " + kBinary + " " + (base_ / "in.txt").string() + " -o " + out());
  EXPECT_EQ(next.exit_code, 0) << next.err;
  EXPECT_FALSE(fs::exists(lock_file()));
  EXPECT_EQ(entries(base_), (std::vector<std::string>{"in.txt", "out.txt", "signals"}));
}

}  // namespace
}  // namespace extshuffle::testing::commit_lock_test
