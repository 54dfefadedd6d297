// The publish is all or nothing (docs/cli.md "The commit",
// docs/reliability.md): a run with splits, shards and a manifest is traced
// once to count its links and renames, then run again with strace's fault
// injection at each of them in turn (the injection is the event: nothing
// races the clock). A link or a rename that fails (ENOSPC, EDQUOT, EIO)
// leaves every destination holding the old dataset, and the message says
// so; a signal whose default action ends the process, at any rename, lets
// the publish complete: every destination holds the new dataset (the
// signal sent to the renaming thread as the rename begins by the fault
// shim's signal-rename, as strace's injection would: 63 runs each traced
// in every call took 13.5 CPU-s). Checked file by file, and by a listing of
// the directory (no hidden file, no lock file left).
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>
#include <regex>
#include <string>
#include <vector>

#include "reliability_support.hpp"
#include "support/command.hpp"

namespace extshuffle::testing::publish_sweep_test {
namespace {

namespace fs = std::filesystem;

const std::string kBinary = extshuffle_binary();
// Six pieces and a manifest: seven renames, seven links of the temporaries'
// hidden names and seven of the replaced files' second names.
const std::string kJob = "in.txt -o \"{split}-{shard}.txt\" --split train=0.9,val=rest --shards 3 --manifest m.json";
const std::vector<std::string> kFiles = {"m.json",        "train-00000.txt", "train-00001.txt", "train-00002.txt",
                                         "val-00000.txt", "val-00001.txt",   "val-00002.txt"};
const std::vector<std::pair<std::string, int>> kSignals = {{"USR1", SIGUSR1}, {"USR2", SIGUSR2},     {"QUIT", SIGQUIT},
                                                           {"ALRM", SIGALRM}, {"XCPU", SIGXCPU},     {"XFSZ", SIGXFSZ},
                                                           {"PIPE", SIGPIPE}, {"VTALRM", SIGVTALRM}, {"PROF", SIGPROF}};

// The dataset's files, name by name.
using Dataset = std::map<std::string, std::string>;

class PublishSweep : public ::testing::Test {
 protected:
  void SetUp() override {
    if (run_command("command -v strace").exit_code != 0) GTEST_SKIP() << "strace is not installed";
    std::string text;
    for (int k = 1; k <= 1000; ++k) text += std::to_string(k) + "\n";
    write_file(dir_ / "in.txt", text);
    ASSERT_EQ(shell(kBinary + " " + kJob + " --seed 2").exit_code, 0);
    new_ = dataset();
    ASSERT_EQ(shell(kBinary + " " + kJob + " --seed 1").exit_code, 0);
    old_ = dataset();
    ASSERT_NE(old_, new_);
    listing_ = listing();
  }
  // `command` in the test's directory (run_command quotes it in single quotes: none in it).
  CommandResult shell(const std::string& command) {
    return run_command("cd " + dir_.path().string() + " && " + command);
  }
  Dataset dataset() const {
    Dataset files;
    for (const std::string& name : kFiles) files[name] = read_file(dir_ / name);
    return files;
  }
  // Whether the directory holds `expected` exactly, naming the first file that differs.
  ::testing::AssertionResult holds(const Dataset& expected) const {
    for (const auto& [name, bytes] : expected) {
      const std::string now = read_file(dir_ / name);
      if (now != bytes) return ::testing::AssertionFailure() << name << " differs (" << now.size() << " bytes)";
    }
    return ::testing::AssertionSuccess();
  }
  std::set<std::string> listing() const {
    std::set<std::string> names;
    for (const auto& entry : fs::directory_iterator(dir_.path())) names.insert(entry.path().filename().string());
    return names;
  }
  // The old dataset back in place before each injected run.
  void restore() const {
    for (const auto& [name, bytes] : old_) write_file(dir_ / name, bytes);
  }
  // The job with seed 2 under strace, `inject` its -e inject=... argument
  // (an error: with seccomp's filter strace stops the run at the traced
  // calls alone; a signal it would not deliver so, strace 6.1).
  CommandResult injected(const std::string& syscall, const std::string& inject) {
    return shell(strace_command() + " -f -qq --seccomp-bpf -o /dev/null -e trace=" + syscall + " -e inject=" + syscall +
                 ":" + inject + " " + kBinary + " " + kJob + " --seed 2");
  }
  // The job with seed 2, `signal_number` sent to the thread that makes the
  // rename after `renames_before` others (the fault shim's signal-rename);
  // fails the test unless the shim's marker says the signal was sent.
  CommandResult signalled(int signal_number, int renames_before) {
    const std::string marker = (marker_dir_ / "marker").string();
    fs::remove(marker);
    const auto r = shell(signal_at_rename(dir_.path().string(), signal_number, renames_before, marker) + kBinary + " " +
                         kJob + " --seed 2");
    EXPECT_TRUE(fs::exists(marker)) << "the signal was never sent";
    return r;
  }
  // How many calls of `syscall` a run of the job makes.
  int count(const std::string& syscall) {
    restore();
    const auto r = shell(strace_command() + " -f -qq -o trace -e trace=" + syscall + " " + kBinary + " " + kJob +
                         " --seed 2 && grep -c \" " + syscall + "(\" trace && rm trace");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return std::atoi(r.out.c_str());
  }
  TempDir dir_, marker_dir_;
  Dataset old_, new_;
  std::set<std::string> listing_;
};

TEST_F(PublishSweep, EveryLinkAndRenameThatFailsLeavesTheOldDataset) {
  const int links = count("linkat"), renames = count("renameat");
  // Every temporary's hidden name and every replaced file's second name; every file renamed once.
  EXPECT_EQ(links, 14);
  EXPECT_EQ(renames, 7);
  for (int k = 1; k <= links; ++k) {
    SCOPED_TRACE("linkat " + std::to_string(k));
    restore();
    const auto r = injected("linkat", "error=ENOSPC:when=" + std::to_string(k));
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_TRUE(
        std::regex_match(r.err, std::regex("extshuffle: cannot write output '([a-z]+-0000[0-2]\\.txt|m\\.json)': "
                                           "No space left on device\n")))
        << r.err;
    EXPECT_TRUE(holds(old_));
    EXPECT_EQ(listing(), listing_);
  }
  const std::vector<std::string> errors = {"ENOSPC", "EDQUOT", "EIO"};
  const std::vector<std::string> reasons = {"No space left on device", "Disk quota exceeded", "Input/output error"};
  for (int k = 1; k <= renames; ++k) {
    SCOPED_TRACE("renameat " + std::to_string(k));
    restore();
    const std::size_t e = static_cast<std::size_t>(k) % errors.size();
    const auto r = injected("renameat", "error=" + errors[e] + ":when=" + std::to_string(k));
    EXPECT_EQ(r.exit_code, 1) << r.err;
    const std::string in_place =
        k == 1 ? "no file was renamed"
               : "the " + std::to_string(k - 1) + (k == 2 ? " file" : " files") + " renamed before it were put back";
    EXPECT_TRUE(std::regex_match(
        r.err, std::regex("extshuffle: cannot rename output into place '[^']+': " + reasons[e] + " \\(" + in_place +
                          ": every destination holds what it held before the run\\)\n")))
        << r.err;
    EXPECT_TRUE(holds(old_));
    EXPECT_EQ(listing(), listing_);
  }
}

TEST_F(PublishSweep, EverySignalThatWouldEndTheRunAtEveryRenameLetsThePublishComplete) {
  const int renames = count("renameat");
  ASSERT_EQ(renames, 7);
  for (const auto& [signal, signal_number] : kSignals) {
    for (int k = 1; k <= renames; ++k) {
      SCOPED_TRACE("SIG" + signal + " at renameat " + std::to_string(k));
      restore();
      const auto r = signalled(signal_number, k - 1);
      EXPECT_EQ(r.exit_code, 0) << r.err;
      // SIGPIPE is ignored by the tool (a closed pipe is a write's EPIPE): nothing to say.
      const std::string warning = signal == "PIPE" ? ""
                                                   : "extshuffle: warning: signal SIG" + signal +
                                                         " came while the output was being published: the commit "
                                                         "completed, every file is in place\n";
      EXPECT_EQ(r.err, warning);
      EXPECT_TRUE(holds(new_));
      EXPECT_EQ(listing(), listing_);
    }
  }
}

}  // namespace
}  // namespace extshuffle::testing::publish_sweep_test
