// --checkpoint DIR as an adversary would use it (docs/cli.md "Resuming a
// run"): another run's DIR (another seed, a changed input) refused with one
// line naming the difference and exit 2, nothing removed; a DIR in use
// refused while its run holds it; a DIR that is a link, another user's, or
// writable by others refused; DIR's files 0600 in a 0700 DIR; a journal
// damaged in its middle or a damaged bucket in scratch reported and never
// trusted, a journal torn inside its last record resumed from the one
// before; what cannot be resumed (standard input and output, -e, a
// compressed output) refused up front; --dry-run says what DIR will hold
// and what a resume would do.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include "reliability_support.hpp"
#include "support/command.hpp"

namespace extshuffle::testing::checkpoint_safety_test {
namespace {

namespace fs = std::filesystem;

constexpr std::uint64_t kRecords = 60000;

struct CheckpointSetup {
  Workspace w;
  std::string ck = (w.root.path() / "ck").string();
  CheckpointSetup() { write_file(w.input(), numbered_u64(kRecords)); }
  std::vector<std::string> args(const std::string& seed = "3") const {
    return {w.input(),        w.output(), "--record-size", "8",  "--seed",       seed, "-S", "64K",
            "--leaf-records", "1024",     "--fanout",      "32", "--checkpoint", ck,   "-q"};
  }
  std::string expected() const {
    const Outcome o = run_binary({w.input(), (w.root.path() / "plain.bin").string(), "--record-size", "8", "--seed",
                                  "3", "-S", "64K", "--leaf-records", "1024", "--fanout", "32", "-q"});
    EXPECT_EQ(o.exit_code, 0) << o.err;
    return read_file(w.root.path() / "plain.bin");
  }
  // A run killed by kill -9 once it has written `after` bytes into DIR
  // (pass 1), or with `pass_two` into the output (the fault shim holds that
  // write: the event).
  void killed_after(std::uint64_t after, bool pass_two = false) const {
    std::filesystem::remove(w.marker());
    const std::string where = pass_two ? w.out_dir.string() : fs::canonical(ck).string();
    Child child(args(), fault_environment("pause-write", where, after, w), w.capture_dir);
    ASSERT_TRUE(wait_for_file_while(w.marker(), child)) << "the run wrote fewer bytes there";
    child.send(SIGKILL);
    EXPECT_EQ(child.wait(), 128 + SIGKILL);
  }
};

mode_t mode_of(const fs::path& path) {
  struct stat st {};
  ::lstat(path.c_str(), &st);
  return st.st_mode & 07777;
}

TEST(CheckpointSafety, AnotherRunsCheckpointIsRefusedWithNothingRemoved) {
  CheckpointSetup s;
  fs::create_directory(s.ck);
  s.killed_after(300000);
  const std::vector<std::string> before = entries(s.ck), outputs = entries(s.w.out_dir);
  ASSERT_FALSE(before.empty());
  const Outcome other = run_binary(s.args("4"));
  EXPECT_EQ(other.exit_code, 2);
  EXPECT_TRUE(is_one_line_error(other.err, "holds the checkpoint of another run \\(--seed is 4, was 3\\)"))
      << other.err;
  EXPECT_EQ(entries(s.ck), before);
  EXPECT_EQ(entries(s.w.out_dir), outputs) << "the checkpointed output's temporary stays";
  // A changed input: its modification time.
  ::utimensat(AT_FDCWD, s.w.input().c_str(), nullptr, 0);
  const Outcome touched = run_binary(s.args());
  EXPECT_EQ(touched.exit_code, 2);
  EXPECT_TRUE(is_one_line_error(touched.err, "input 1 modification time is")) << touched.err;
  EXPECT_EQ(entries(s.ck), before);
}

TEST(CheckpointSafety, DirectoryAndFilesAreTheUsersAlone) {
  CheckpointSetup s;
  fs::create_directory(s.ck);
  s.killed_after(300000);
  EXPECT_EQ(mode_of(s.ck), 0700u);
  for (const std::string& name : entries(s.ck)) EXPECT_EQ(mode_of(fs::path(s.ck) / name), 0600u) << name;
  // A link to a directory, a directory others may write, another user's.
  const fs::path link = s.w.root.path() / "link";
  fs::create_directory_symlink(s.ck, link);
  std::vector<std::string> via_link = s.args();
  via_link[via_link.size() - 2] = link.string();
  const Outcome linked = run_binary(via_link);
  EXPECT_EQ(linked.exit_code, 2);
  EXPECT_TRUE(is_one_line_error(linked.err, "is not a directory")) << linked.err;
  ::chmod(s.ck.c_str(), 0770);
  const Outcome shared = run_binary(s.args());
  EXPECT_EQ(shared.exit_code, 2);
  EXPECT_TRUE(is_one_line_error(shared.err, "writable by others")) << shared.err;
  ::chmod(s.ck.c_str(), 0700);
  if (::geteuid() == 0) {
    ASSERT_EQ(::chown(s.ck.c_str(), 65534, 65534), 0);
    const Outcome foreign = run_binary(s.args());
    EXPECT_EQ(foreign.exit_code, 2);
    EXPECT_TRUE(is_one_line_error(foreign.err, "belongs to another user")) << foreign.err;
    ASSERT_EQ(::chown(s.ck.c_str(), 0, 0), 0);
  }
  const Outcome resumed = run_binary(s.args());
  EXPECT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_TRUE(read_file(s.w.output()) == s.expected());
}

// A second run on a DIR in use is refused while the first holds it (the
// first held at the shim's pause), and the first then completes.
TEST(CheckpointSafety, SecondRunOnTheSameDirectoryIsRefused) {
  CheckpointSetup s;
  fs::create_directory(s.ck);
  Child first(s.args(), fault_environment("pause-write", fs::canonical(s.ck).string(), 200000, s.w), s.w.capture_dir);
  ASSERT_TRUE(wait_for_file_while(s.w.marker(), first));
  const Outcome second = run_binary(s.args());
  EXPECT_EQ(second.exit_code, 1);
  EXPECT_TRUE(is_one_line_error(second.err, "in use by another run")) << second.err;
  write_file(s.w.release(), "");
  EXPECT_EQ(first.wait(), 0) << first.err();
  EXPECT_TRUE(read_file(s.w.output()) == s.expected());
  EXPECT_TRUE(entries(s.ck).empty());
}

TEST(CheckpointSafety, DamagedJournalIsReportedAndACutOneResumes) {
  CheckpointSetup s;
  fs::create_directory(s.ck);
  s.killed_after(200000, true);
  const fs::path journal = fs::path(s.ck) / "journal";
  std::string bytes = read_file(journal);
  ASSERT_GT(bytes.size(), 200u);
  // A record torn as a death in the middle of its append leaves it (the
  // file ends inside it: here the start of a record header and its first
  // bytes): dropped, and the run resumes from the record before.
  write_file(journal, bytes + bytes.substr(0, 20));
  Outcome torn = run_binary(s.args());
  EXPECT_EQ(torn.exit_code, 0) << torn.err;
  EXPECT_TRUE(read_file(s.w.output()) == s.expected());
  // Its last whole record cut (a synced record lost, which fdatasync rules
  // out): the run resumes from the record before, whose buckets may have
  // been released once the lost record was durable. Either the right bytes
  // or the checksum's one-line refusal with no output: never other bytes,
  // never a crash.
  fs::create_directory(s.ck);
  fs::remove(s.w.output());
  s.killed_after(200000, true);
  bytes = read_file(journal);
  write_file(journal, bytes.substr(0, bytes.size() - 7));
  const Outcome cut = run_binary(s.args());
  if (cut.exit_code == 0) {
    EXPECT_TRUE(read_file(s.w.output()) == s.expected());
  } else {
    EXPECT_EQ(cut.exit_code, 1) << cut.err;
    EXPECT_TRUE(is_one_line_error(cut.err, "fails its checksum")) << cut.err;
    EXPECT_FALSE(fs::exists(s.w.output()));
    for (const std::string& name : entries(s.ck)) fs::remove(fs::path(s.ck) / name);
  }
  // One byte changed in its first record, with records after it.
  fs::create_directory(s.ck);
  fs::remove(s.w.output());
  s.killed_after(200000, true);
  bytes = read_file(journal);
  bytes[40] = static_cast<char>(bytes[40] ^ 1);
  write_file(journal, bytes);
  const std::vector<std::string> before = entries(s.ck);
  const Outcome damaged = run_binary(s.args());
  EXPECT_EQ(damaged.exit_code, 1);
  EXPECT_TRUE(is_one_line_error(damaged.err, "checkpoint journal .* is damaged at byte")) << damaged.err;
  EXPECT_EQ(entries(s.ck), before);
}

// A byte of a bucket kept in DIR changed: the resumed run stops at its
// checksum, with no output.
TEST(CheckpointSafety, DamagedScratchIsReported) {
  CheckpointSetup s;
  fs::create_directory(s.ck);
  // In pass 1, after a durable point that holds byte 1000 (bucket 0, 1/32
  // of the records scattered: 4000 of them hold 1000 bytes). Points are
  // made durable behind the walk, so a kill may come before the first:
  // the rerun then starts over and rightly never reads the changed byte.
  // Killed later until --dry-run says the rerun resumes from such a point.
  std::vector<std::string> dry = s.args();
  dry.push_back("--dry-run");
  const std::regex resumes("goes on with pass 1 at record ([0-9]+) ");
  std::uint64_t resumed_from = 0;
  for (std::uint64_t after = 300000; after <= 460000 && resumed_from < 4000; after += 40000) {
    for (const std::string& name : entries(s.ck)) fs::remove(fs::path(s.ck) / name);
    s.killed_after(after);
    std::smatch found;
    const std::string said = run_binary(dry).out;
    if (std::regex_search(said, found, resumes)) resumed_from = std::stoull(found[1]);
  }
  ASSERT_GE(resumed_from, 4000u) << "no kill came after a durable point of pass 1";
  const fs::path scratch = fs::path(s.ck) / "scratch-0";
  std::string bytes = read_file(scratch);
  ASSERT_GT(bytes.size(), 300000u);
  // Buckets of fixed-size records lie end to end from offset 0.
  bytes[1000] = static_cast<char>(bytes[1000] ^ 0x10);
  write_file(scratch, bytes);
  const Outcome damaged = run_binary(s.args());
  EXPECT_EQ(damaged.exit_code, 1);
  EXPECT_TRUE(is_one_line_error(damaged.err, "fails its checksum")) << damaged.err;
  EXPECT_FALSE(fs::exists(s.w.output()));
}

TEST(CheckpointSafety, WhatCannotBeResumedIsRefusedUpFront) {
  CheckpointSetup s;
  const std::string ck = "--checkpoint=" + s.ck;
  const std::vector<std::pair<std::vector<std::string>, std::string>> refused{
      {{"-", s.w.output(), ck}, "standard input cannot be read again"},
      {{s.w.input(), "-", "--record-size", "8", ck}, "standard output cannot be continued"},
      {{"-e", "a", "b", ck}, "nothing to resume"},
      {{s.w.input(), (s.w.out_dir / "out.bin.gz").string(), "--record-size", "8", ck}, "is compressed"}};
  for (const auto& [arguments, why] : refused) {
    const Outcome o = run_binary(arguments);
    EXPECT_EQ(o.exit_code, 2) << why;
    EXPECT_TRUE(is_one_line_error(o.err, why)) << o.err;
  }
}

TEST(CheckpointSafety, DryRunSaysWhatDirectoryHoldsAndWhatAResumeDoes) {
  CheckpointSetup s;
  std::vector<std::string> dry = s.args();
  dry.push_back("--dry-run");
  const Outcome fresh = run_binary(dry);
  EXPECT_EQ(fresh.exit_code, 0) << fresh.err;
  EXPECT_NE(fresh.out.find("holds no point of this run yet"), std::string::npos) << fresh.out;
  EXPECT_FALSE(fs::exists(s.ck)) << "a dry run creates nothing";
  fs::create_directory(s.ck);
  s.killed_after(200000, true);
  const std::vector<std::string> before = entries(s.ck);
  const Outcome later = run_binary(dry);
  EXPECT_EQ(later.exit_code, 0) << later.err;
  EXPECT_NE(later.out.find("checkpoint: a resume from"), std::string::npos) << later.out;
  EXPECT_EQ(entries(s.ck), before);
  dry[5] = "4";  // another seed
  const Outcome other = run_binary(dry);
  EXPECT_NE(other.out.find("this run would be refused"), std::string::npos) << other.out;
}

}  // namespace
}  // namespace extshuffle::testing::checkpoint_safety_test
