// Runs a shell command for the CLI black-box tests and captures its exit
// code, standard output and standard error.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace extshuffle::testing {

struct CommandResult {
  int exit_code = -1;  // 128 + signal number when killed by a signal, as the shell reports it
  std::string out;
  std::string err;
};

inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

inline void write_file(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// A fresh directory under the system temporary directory, removed on destruction.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "extshuffle-test-XXXXXX").string();
    path_ = ::mkdtemp(pattern.data());
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

inline CommandResult run_command(const std::string& command) {
  TempDir capture;
  const std::string full = "bash -c '" + command + "' >" + (capture / "out").string() + " 2>" +
                           (capture / "err").string() + " </dev/null";
  const int status = std::system(full.c_str());
  CommandResult result;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.out = read_file(capture / "out");
  result.err = read_file(capture / "err");
  return result;
}

}  // namespace extshuffle::testing
