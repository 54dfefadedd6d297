// Paths to remove if the process is ended by a signal (terminating_signals()):
// the handlers unlink them (async-signal-safe) and re-raise the signal, so
// the destination is untouched and no scratch file remains.
#pragma once

#include <signal.h>

#include <string>
#include <vector>

namespace extshuffle::io {

// Every signal whose default action ends the process and that another
// process may send: SIGHUP, SIGINT, SIGQUIT, SIGUSR1, SIGUSR2, SIGPIPE,
// SIGALRM, SIGTERM, SIGSTKFLT, SIGXCPU, SIGXFSZ, SIGVTALRM, SIGPROF, SIGIO,
// SIGPWR and the real-time signals. SIGKILL and SIGSTOP cannot be caught;
// the signals of a fault in the process itself (SIGSEGV, SIGBUS, SIGILL,
// SIGFPE, SIGTRAP, SIGSYS, SIGABRT) mean it cannot go on, and are left as
// they are.
std::vector<int> terminating_signals();

// Installs the handlers once (SIGINT, SIGTERM and SIGHUP always, the others
// of terminating_signals() where their action is still the default); later
// calls do nothing.
void install_cleanup_handlers();
// Registers a path; returns a slot for forget_cleanup_path. Thread-safe.
int register_cleanup_path(const std::string& path);
// The path no longer needs removing (renamed or removed by its owner).
void forget_cleanup_path(int slot);
// Unlinks every registered path; async-signal-safe, for other handlers that
// end the process (io/mapped_bytes.cpp's SIGBUS handler).
void remove_registered_paths() noexcept;

// Deaf to every signal of terminating_signals() while a commit publishes
// (docs/cli.md "The commit"): from construction to release() those not
// ignored are blocked on this thread and, arriving on another, only noted
// by the handlers, so that a publish that has begun completes. One at a time.
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
  sigset_t held_;  // the signals blocked: every one of terminating_signals() not ignored
  sigset_t previous_;
  bool holding_ = true;
};

}  // namespace extshuffle::io
