// Helpers of the reliability tests: run the real extshuffle binary as a child
// process with extra environment (the fault shim), signal it while it runs,
// and check what it leaves on disk. EXTSHUFFLE_BINARY and EXTSHUFFLE_FAULT_SHIM
// are set by CMake.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <regex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "support/command.hpp"
#include "support/permutations.hpp"
#include "support/process_state.hpp"

extern char** environ;

namespace extshuffle::testing {

inline const std::string kBinary = extshuffle_binary();
inline const std::string kFaultShim =
    configured_path("EXTSHUFFLE_FAULT_SHIM", "../lib/libextshuffle_fault_shim.so", EXTSHUFFLE_FAULT_SHIM);

using Environment = std::map<std::string, std::string>;

// A child process running the binary (or `program`) with `arguments`; its
// standard output and error go to files in `capture` (standard input is
// /dev/null and standard output capture/stdout unless given).
class Child {
 public:
  Child(const std::vector<std::string>& arguments, const Environment& extra, const std::filesystem::path& capture,
        const std::string& stdin_path = "/dev/null", const std::string& stdout_path = "",
        const std::string& program = kBinary)
      : out_path_(stdout_path.empty() ? capture / "stdout" : std::filesystem::path(stdout_path)),
        err_path_(capture / "stderr") {
    std::vector<std::string> env_strings;
    for (char** e = environ; *e; ++e) {
      const std::string entry = *e;
      const std::string key = entry.substr(0, entry.find('='));
      if (!extra.count(key)) env_strings.push_back(entry);
    }
    for (const auto& [key, value] : extra) env_strings.push_back(key + "=" + value);
    std::vector<std::string> argv_strings{program};
    argv_strings.insert(argv_strings.end(), arguments.begin(), arguments.end());
    std::vector<char*> argv, envp;
    for (auto& s : argv_strings) argv.push_back(s.data());
    argv.push_back(nullptr);
    for (auto& s : env_strings) envp.push_back(s.data());
    envp.push_back(nullptr);
    pid_ = ::fork();
    if (pid_ < 0) throw std::runtime_error("fork failed");
    if (pid_ == 0) {
      const int in = ::open(stdin_path.c_str(), O_RDONLY);
      const int out = ::open(out_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      const int err = ::open(err_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (in < 0 || out < 0 || err < 0) ::_exit(125);
      ::dup2(in, 0);
      ::dup2(out, 1);
      ::dup2(err, 2);
      ::execve(argv[0], argv.data(), envp.data());
      ::_exit(126);
    }
  }
  ~Child() {
    if (pid_ > 0 && exit_code_ < 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  pid_t pid() const { return pid_; }
  void send(int signal_number) { ::kill(pid_, signal_number); }
  bool running() {
    if (exit_code_ >= 0) return false;
    int status = 0;
    const pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_) record(status);
    return exit_code_ < 0;
  }
  // Waits for the exit; after `timeout` kills the child and returns -1.
  int wait(std::chrono::seconds timeout = std::chrono::seconds(120)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (running()) {
      if (std::chrono::steady_clock::now() > deadline) {
        ::kill(pid_, SIGKILL);
        int status = 0;
        ::waitpid(pid_, &status, 0);
        exit_code_ = -1;
        return -1;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return exit_code_;
  }
  std::string out() const { return read_file(out_path_); }
  std::string err() const { return read_file(err_path_); }

 private:
  void record(int status) { exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status); }
  std::filesystem::path out_path_, err_path_;
  pid_t pid_ = -1;
  int exit_code_ = -1;
};

struct Outcome {
  int exit_code = -1;  // 128 + signal when killed, -1 on timeout
  std::string out, err;
};

inline Outcome run_binary(const std::vector<std::string>& arguments, const Environment& extra = {},
                          const std::string& stdin_path = "/dev/null") {
  TempDir capture;
  Child child(arguments, extra, capture.path(), stdin_path);
  Outcome o;
  o.exit_code = child.wait();
  o.out = child.out();
  o.err = child.err();
  return o;
}

inline bool wait_for_file(const std::filesystem::path& path, std::chrono::seconds timeout = std::chrono::seconds(60)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!std::filesystem::exists(path)) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return true;
}

// Waits for `path` to appear (the fault shim's marker: a call is held)
// while `child` runs; false when the child ended first or after `timeout`.
inline bool wait_for_file_while(const std::filesystem::path& path, Child& child,
                                std::chrono::seconds timeout = std::chrono::seconds(60)) {
  return wait_for_event([&] { return std::filesystem::exists(path); }, [&] { return child.running(); },
                        std::chrono::milliseconds(2), timeout);
}

// Names in a directory, sorted (hidden ones included: the temporary output is hidden).
inline std::vector<std::string> entries(const std::filesystem::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) names.push_back(entry.path().filename());
  std::sort(names.begin(), names.end());
  return names;
}

// One line "extshuffle: <what>: <why>" matching `pattern` somewhere in it.
inline bool is_one_line_error(const std::string& err, const std::string& pattern) {
  return std::count(err.begin(), err.end(), '\n') == 1 &&
         std::regex_search(err, std::regex("^extshuffle: .*" + pattern + ".*\n$"));
}

// The layout every fault test uses: the input, the scratch directory and the
// output directory apart, so that a path prefix picks exactly one of them.
// Paths are canonical because the shim compares them with /proc/self/fd links.
struct Workspace {
  TempDir root;
  std::filesystem::path in_dir, tmp_dir, out_dir, capture_dir;
  Workspace() {
    const auto base = std::filesystem::canonical(root.path());
    in_dir = base / "in";
    tmp_dir = base / "tmp";
    out_dir = base / "out";
    capture_dir = base / "capture";
    for (const auto& d : {in_dir, tmp_dir, out_dir, capture_dir}) std::filesystem::create_directory(d);
  }
  std::string input() const { return (in_dir / "in.bin").string(); }
  std::string output() const { return (out_dir / "out.bin").string(); }
  std::string marker() const { return (capture_dir / "fault-fired").string(); }
  std::string release() const { return (capture_dir / "release").string(); }
};

// n numbered 8-byte records (record i holds i), as a string of bytes.
inline std::string numbered_u64(std::uint64_t n) {
  const auto data = numbered_records(n, 8);
  return std::string(reinterpret_cast<const char*>(data.data()), data.size());
}

inline std::vector<std::uint64_t> u64_indices(const std::string& bytes) {
  return record_indices(std::as_bytes(std::span(bytes.data(), bytes.size())), 8);
}

// The shim's environment for one fault. Under AddressSanitizer (the
// sanitize stage runs these tests too) the runtime insists on coming first
// in the library list; the preloaded shim does not need that, so the check
// is turned off for the child.
inline Environment fault_environment(const std::string& fault, const std::string& path_prefix,
                                     std::uint64_t after_bytes, const Workspace& w) {
  const char* asan = std::getenv("ASAN_OPTIONS");
  return {{"LD_PRELOAD", kFaultShim},
          {"ASAN_OPTIONS", std::string(asan ? asan : "") + (asan && *asan ? ":" : "") + "verify_asan_link_order=0"},
          {"EXTSHUFFLE_FAULT", fault},
          {"EXTSHUFFLE_FAULT_PATH", path_prefix},
          {"EXTSHUFFLE_FAULT_AFTER_BYTES", std::to_string(after_bytes)},
          {"EXTSHUFFLE_FAULT_MARKER", w.marker()},
          {"EXTSHUFFLE_FAULT_RELEASE", w.release()}};
}

// A shell command's prefix of environment that has the fault shim send
// `signal_number` to the thread making the renameat in `directory` that
// comes after `renames_before` others there (signal-rename, as strace's
// -e inject=renameat:signal=...:when=renames_before+1 without tracing every
// call), the shim's marker written to `marker` when it is sent.
inline std::string signal_at_rename(const std::string& directory, int signal_number, int renames_before,
                                    const std::string& marker) {
  const char* asan = std::getenv("ASAN_OPTIONS");
  return "ASAN_OPTIONS=" + std::string(asan ? asan : "") + (asan && *asan ? ":" : "") +
         "verify_asan_link_order=0 LD_PRELOAD=" + kFaultShim +
         " EXTSHUFFLE_FAULT=signal-rename EXTSHUFFLE_FAULT_PATH=" + directory +
         " EXTSHUFFLE_FAULT_AFTER_BYTES=" + std::to_string(renames_before) +
         " EXTSHUFFLE_FAULT_SIGNAL=" + std::to_string(signal_number) + " EXTSHUFFLE_FAULT_MARKER=" + marker + " ";
}

}  // namespace extshuffle::testing
