// Paths to remove if the process is stopped by SIGINT, SIGTERM, SIGHUP or
// SIGPIPE: the handlers unlink them (async-signal-safe) and re-raise the
// signal, so the destination is untouched and no scratch file remains.
#pragma once

#include <signal.h>

#include <string>

namespace extshuffle::io {

// Installs the handlers once; later calls do nothing.
void install_cleanup_handlers();
// Registers a path; returns a slot for forget_cleanup_path. Thread-safe.
int register_cleanup_path(const std::string& path);
// The path no longer needs removing (renamed or removed by its owner).
void forget_cleanup_path(int slot);
// Unlinks every registered path; async-signal-safe, for other handlers that
// end the process (io/mapped_bytes.cpp's SIGBUS handler).
void remove_registered_paths() noexcept;

// Deaf to SIGINT, SIGTERM and SIGHUP while a commit publishes (docs/cli.md
// "The commit"): from construction to release() they are blocked on this
// thread and, arriving on another, only noted by the handlers, so that a
// publish that has begun completes. One at a time.
class SignalHold {
 public:
  SignalHold();
  ~SignalHold() { release(); }
  SignalHold(const SignalHold&) = delete;
  SignalHold& operator=(const SignalHold&) = delete;
  // Ends the hold; returns the signal that came meanwhile (0: none), which
  // is then forgotten. Later calls return 0.
  int release();

 private:
  sigset_t previous_;
  bool held_ = true;
};

}  // namespace extshuffle::io
