// What a running process is doing, read from /proc: the events the tests of
// locks and of races wait for, instead of giving one side a head start on
// the clock (which a busy machine does not keep).
//   wait_for_event([&] { return waits_for_lock(run.pid(), dir); }, [&] { return run.running(); });
#pragma once

#include <fcntl.h>
#include <sys/syscall.h>
#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>
#include <thread>

namespace extshuffle::testing {

// Whether a thread of process `pid` is blocked in a lock call on a
// descriptor whose path starts with `path_prefix`. /proc/<pid>/task/<tid>/syscall
// names the call a blocked thread is in and its arguments, so any kind of
// lock is seen: flock(2), or fcntl(2)'s F_SETLKW and F_OFD_SETLKW. False when
// the process is gone or its entries cannot be read.
inline bool waits_for_lock(pid_t pid, const std::string& path_prefix) {
  const std::filesystem::path process = "/proc/" + std::to_string(pid);
  std::error_code error;
  for (const auto& task : std::filesystem::directory_iterator(process / "task", error)) {
    std::ifstream in(task.path() / "syscall");
    long number = -1;
    std::string fd_text, command_text;
    if (!(in >> number >> fd_text >> command_text)) continue;  // "running", or gone
    const unsigned long long command = std::stoull(command_text, nullptr, 16);
    const bool locking =
        number == SYS_flock || (number == SYS_fcntl && (command == F_SETLKW || command == F_OFD_SETLKW));
    if (!locking) continue;
    const auto fd = std::to_string(std::stoull(fd_text, nullptr, 16));
    const auto locked = std::filesystem::read_symlink(process / "fd" / fd, error);
    if (!error && locked.string().rfind(path_prefix, 0) == 0) return true;
  }
  return false;
}

// How many processes wait for a lock on `path_prefix` (waits_for_lock).
inline int processes_waiting_for_lock(const std::string& path_prefix) {
  int count = 0;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", error)) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    if (waits_for_lock(static_cast<pid_t>(std::stol(name)), path_prefix)) ++count;
  }
  return count;
}

// Whether process `pid` holds a descriptor of `path` (as /proc/<pid>/fd
// names it: canonical, no symbolic link).
inline bool holds_open(pid_t pid, const std::filesystem::path& path) {
  std::error_code error;
  for (const auto& fd : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd", error)) {
    std::error_code link_error;
    if (std::filesystem::read_symlink(fd.path(), link_error) == path && !link_error) return true;
  }
  return false;
}

// Waits until `happened()` (true), or until `still_going()` says it never
// will (false): the process ended, or went past the point. Asks every
// `poll`; `limit` only bounds a test that would otherwise hang.
template <typename Happened, typename StillGoing>
bool wait_for_event(Happened happened, StillGoing still_going,
                    std::chrono::milliseconds poll = std::chrono::milliseconds(1),
                    std::chrono::seconds limit = std::chrono::seconds(300)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (happened()) return true;
    if (!still_going()) return happened();
    std::this_thread::sleep_for(poll);
  }
  return false;
}

}  // namespace extshuffle::testing
