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

#include "same_bytes.hpp"  // the comparisons of what read_file returns

namespace extshuffle::testing {

struct CommandResult {
  int exit_code = -1;  // 128 + signal number when killed by a signal, as the shell reports it
  std::string out;
  std::string err;
};

// A regular file is read into a string of its size, in one read: the
// black-box rooms compile at -O0, and a stream's buffer grown by doubling,
// then copied out, for outputs of 100 MB was most of some tests' CPU (page
// faults and copies). Pseudo files (/proc: size 0) and what grows while it
// is read are read on as a stream.
inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::error_code error;
  const std::uintmax_t size =
      std::filesystem::is_regular_file(path, error) ? std::filesystem::file_size(path, error) : 0;
  std::string bytes;
  if (!error && size > 0) {
    bytes.resize(size);
    in.read(bytes.data(), static_cast<std::streamsize>(size));
    bytes.resize(static_cast<std::size_t>(in.gcount()));
    if (!in) return bytes;  // it ended before its size (/sys): all there is
  }
  std::ostringstream rest;
  rest << in.rdbuf();
  bytes += rest.str();
  return bytes;
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

// A path the black-box tests need (the binary, the fault shim, the source
// tree): the environment variable `variable` when it is set and not empty;
// else `in_bundle` relative to the directory of the running test executable
// when that exists (a relocated bundle, scripts/bundle.sh: the tests sit in
// <bundle>/tests, the binary in <bundle>/bin); else `built_in` (the build
// tree's path, compiled in by CMake).
inline std::string configured_path(const char* variable, const char* in_bundle, const char* built_in) {
  const char* value = std::getenv(variable);
  if (value != nullptr && *value != '\0') return value;
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (!error) {
    const std::filesystem::path beside = self.parent_path() / in_bundle;
    if (std::filesystem::exists(beside, error)) return beside.lexically_normal().string();
  }
  return built_in;
}

#ifdef EXTSHUFFLE_BINARY
// The extshuffle binary under test: $EXTSHUFFLE_BINARY, else the bundle's, else the build's.
inline std::string extshuffle_binary() {
  return configured_path("EXTSHUFFLE_BINARY", "../bin/extshuffle", EXTSHUFFLE_BINARY);
}
#endif

// Whether the program under test runs under AddressSanitizer, whose
// quarantine keeps freed memory resident and whose shadow reserves terabytes
// of address space: when this test is instrumented too, or when
// $EXTSHUFFLE_SANITIZED is set (scripts/sanitize.sh runs the uninstrumented
// black-box tests against the instrumented program).
inline bool binary_is_sanitized() {
#if defined(__SANITIZE_ADDRESS__)
  return true;
#else
  const char* value = std::getenv("EXTSHUFFLE_SANITIZED");
  return value != nullptr && *value != '\0' && std::string(value) != "0";
#endif
}

// The strace command with the program's environment: LeakSanitizer cannot
// run under ptrace (it aborts the traced program at exit), so an
// instrumented program traced here checks all but leaks.
inline std::string strace_command() {
  return binary_is_sanitized() ? "ASAN_OPTIONS=\"$ASAN_OPTIONS:detect_leaks=0\" strace" : "strace";
}
#ifdef EXTSHUFFLE_SOURCE_DIR
// The source tree (README, data/): $EXTSHUFFLE_SOURCE_DIR, else the bundle's
// copy of README and data/, else the build's source tree.
inline std::string extshuffle_source_dir() {
  return configured_path("EXTSHUFFLE_SOURCE_DIR", "../share/extshuffle", EXTSHUFFLE_SOURCE_DIR);
}
#endif

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
