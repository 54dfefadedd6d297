// A suite of extshuffle-mpi tests whose inputs a script of tests/mpi/
// writes (Suite::kScript, run by /usr/bin/python3, which has numpy, with
// Suite::kScriptCommand before the directory if the suite names one) into a
// directory the suite's tests share and only read.
//
// The directory is made once per build tree, not once per test: ctest runs
// each test in a process of its own, and make_balance_inputs.py (218 MB of
// inputs) took 8 s of CPU for each of its suite's 25 tests: the mpi label
// took 356 s of CPU with it, 179 s without. It is named for the script's bytes, so an edited script
// makes its inputs anew; the first test to need it makes it under a lock
// while the others wait, into a directory renamed into place when complete.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <string>

#include "mpi_support.hpp"

namespace extshuffle::testing {

// The inputs `script` writes (`command`, if any, its first argument), made
// at most once under `root`.
inline std::filesystem::path script_inputs(const std::filesystem::path& root, const std::string& script,
                                           const std::string& command = "") {
  namespace fs = std::filesystem;
  const std::string source = extshuffle_source_dir() + "/tests/mpi/" + script;
  const std::string key = script + "-" + std::to_string(std::hash<std::string>{}(command + "\n" + read_file(source)));
  fs::create_directories(root);
  const fs::path ready = root / key;
  const int lock = ::open((root / (script + ".lock")).c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644);
  if (lock < 0 || ::flock(lock, LOCK_EX) != 0) throw std::runtime_error("cannot lock " + (root / script).string());
  if (!fs::exists(ready)) {
    for (const auto& entry : fs::directory_iterator(root)) {  // an older script's inputs
      if (entry.is_directory() && entry.path().filename().string().rfind(script + "-", 0) == 0) {
        fs::remove_all(entry.path());
      }
    }
    const fs::path making = root / (key + ".making");
    fs::create_directories(making);
    const auto made =
        run_command("/usr/bin/python3 " + source + " " + (command.empty() ? "" : command + " ") + making.string());
    if (made.exit_code != 0) {
      ::close(lock);
      throw std::runtime_error(script + " failed: " + made.err);
    }
    fs::rename(making, ready);
  }
  ::close(lock);
  return ready;
}

template <class Suite>
class MpiSuite : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    try {
      inputs_ = script_inputs(EXTSHUFFLE_MPI_TEST_INPUTS, Suite::kScript, Suite::kScriptCommand);
    } catch (const std::exception& e) {
      FAIL() << e.what();
    }
  }
  static std::string input(const std::string& name) { return (inputs_ / name).string(); }
  static constexpr const char* kScriptCommand = "";  // a suite's own hides it

  TempDir dir_;  // each test's own
  static inline std::filesystem::path inputs_;
};

}  // namespace extshuffle::testing
