// The fixture of the --checkpoint tests against the real binary
// (checkpoint_kill_test.cpp, checkpoint_count_test.cpp): a command with its
// input, output and checkpoint directories, its uninterrupted run's bytes,
// and runs of it killed or failing and then resumed.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "reliability_support.hpp"
#include "support/command.hpp"

namespace extshuffle::testing::checkpoint_run {

namespace fs = std::filesystem;

inline bool have(const std::string& tool) { return run_command("command -v " + tool).exit_code == 0; }

inline std::string quoted(const std::string& s) { return "\"" + s + "\""; }

// The moments a case takes of each kind: $EXTSHUFFLE_CHECKPOINT_MOMENTS, else `ci`.
inline int moments(int ci) {
  const char* value = std::getenv("EXTSHUFFLE_CHECKPOINT_MOMENTS");
  return value != nullptr && *value != '\0' ? std::atoi(value) : ci;
}

// A command of the test: its arguments after the binary, the outputs it
// writes (names in the output directory), the input files it reads.
struct Case {
  std::string name;
  std::string arguments;  // with {in}, {out}, {ck} for the directories
  std::vector<std::string> outputs;
  int ci_moments = 3;
};

class CheckpointRun {
 public:
  CheckpointRun(const Case& c, const fs::path& root)
      : c_(c), in_(made(root) / "in"), out_(made(root) / "out"), ck_(made(root) / "ck") {
    fs::create_directories(in_);
  }
  const fs::path& in() const { return in_; }
  const fs::path& checkpoint_directory() const { return ck_; }
  const fs::path& output_directory() const { return out_; }

  // The command's arguments (`checkpoint`: with --checkpoint DIR), then `extra`.
  std::vector<std::string> arguments(bool checkpoint, const std::string& extra) const {
    std::string a = c_.arguments + (checkpoint ? " --checkpoint {ck}" : "") + " " + extra;
    for (const auto& [key, value] : std::map<std::string, std::string>{{"{in}", in_}, {"{out}", out_}, {"{ck}", ck_}}) {
      for (std::size_t at; (at = a.find(key)) != std::string::npos;) a.replace(at, key.size(), value);
    }
    std::vector<std::string> words;
    std::istringstream in(a);
    for (std::string word; in >> word;) words.push_back(word);
    return words;
  }
  std::string command(bool checkpoint, const std::string& extra) const {
    std::string line = quoted(kBinary);
    for (const std::string& word : arguments(checkpoint, extra)) line += " " + quoted(word);
    return line;
  }

  // The uninterrupted run without --checkpoint: the reference files.
  void reference() {
    fresh();
    const CommandResult r = run_command(command(false, "-q"));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    for (const std::string& name : c_.outputs) expected_[name] = read_file(out_ / name);
  }

  // Per syscall, the most calls one thread makes in a checkpointed run.
  std::map<std::string, int> count_events() {
    fresh();
    const fs::path log = out_.parent_path() / "strace.log";
    const CommandResult r = run_command(strace_command() + " -f -qq -e trace=write,fdatasync,pwrite64,renameat -o " +
                                        quoted(log.string()) + " " + command(true, "-q"));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::map<std::pair<std::string, std::string>, int> per_thread;
    std::istringstream lines(read_file(log));
    for (std::string line; std::getline(lines, line);) {
      std::istringstream words(line);
      std::string tid, call;
      words >> tid >> call;
      call = call.substr(0, call.find('('));
      if (!call.empty() && call != "<..." && call != "+++") ++per_thread[{call, tid}];
    }
    std::map<std::string, int> most;
    for (const auto& [key, count] : per_thread) most[key.first] = std::max(most[key.first], count);
    return most;
  }

  // The checkpointed command run after `prefix` (strace's injection), then
  // resumed. Returns a line for the sweep's table.
  std::string kill_and_resume(const std::string& kind, const std::string& prefix) {
    fresh();
    const CommandResult killed = run_command(prefix + " " + command(true, "-q"));
    return resume(kind, killed.exit_code, killed.err);
  }

  // The run again after one that ended with `exit_code` and `err`: the
  // outcome checked. Returns a line for the sweep's table.
  std::string resume(const std::string& kind, int exit_code, const std::string& err) {
    std::string line = c_.name + " | " + kind + " | exit " + std::to_string(exit_code);
    EXPECT_TRUE(exit_code == 0 || exit_code == 1 || exit_code == 137) << kind << ": " << err;
    // A run the moment did not stop (its calls fewer than K, or a failure
    // it may go past) must have written the right files itself.
    if (exit_code == 0) {
      check_outputs(kind);
      return line + " | ran through";
    }
    // (A failure injected into every thread's K-th write may take the
    // message's own write: then there is none.)
    if (exit_code == 1 && !err.empty()) {
      EXPECT_TRUE(is_one_line_error(err, "")) << kind << ": " << err;
    }
    const CommandResult resumed = run_command(command(true, "-v"));
    EXPECT_EQ(resumed.exit_code, 0) << kind << ": " << resumed.err;
    const std::string mark = "resumed from --checkpoint";
    const std::size_t at = resumed.err.find(mark);
    std::string how = at == std::string::npos ? "started over" : resumed.err.substr(at + mark.size() + 1);
    line += " | " + how.substr(0, how.find('\n'));
    check_outputs(kind);
    return line;
  }

  void check_outputs(const std::string& kind) {
    for (const auto& [name, bytes] : expected_) {
      const std::string got = read_file(out_ / name);
      const auto differ = std::mismatch(got.begin(), got.end(), bytes.begin(), bytes.end());
      EXPECT_TRUE(got == bytes) << c_.name << ", " << kind << ": '" << name << "' has " << got.size()
                                << " bytes, the uninterrupted run's " << bytes.size() << "; first difference at byte "
                                << (differ.first - got.begin());
    }
    std::vector<std::string> left;
    if (fs::exists(ck_)) left = entries(ck_);
    EXPECT_TRUE(left.empty()) << c_.name << ", " << kind << ": DIR holds " << left.size() << " files after success";
    for (const std::string& name : entries(out_)) {
      EXPECT_TRUE(expected_.count(name)) << c_.name << ", " << kind << ": '" << name << "' left beside the outputs";
    }
  }

  void fresh() {
    fs::remove_all(out_);
    fs::remove_all(ck_);
    fs::create_directories(out_);
  }

 private:
  // `root`, made, canonical: the shim compares paths with /proc/self/fd's links.
  static fs::path made(const fs::path& root) {
    fs::create_directories(root);
    return fs::canonical(root);
  }
  Case c_;
  fs::path in_, out_, ck_;
  std::map<std::string, std::string> expected_;
};

}  // namespace extshuffle::testing::checkpoint_run
