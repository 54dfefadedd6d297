#include "extshuffle/io/cleanup_registry.hpp"

#include <signal.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <vector>

namespace extshuffle::io {
namespace {

constexpr int kSlots = 64;  // a block's
constexpr std::size_t kPathBytes = 4096;

// Fixed storage so the handler never allocates; a slot is live while its
// flag is set. The first block is static; extshuffle-mpi registers every
// piece of a sharded output (its hidden file is named, so that the ranks
// can share it), and may need hundreds: further blocks are allocated by
// register_cleanup_path (never by the handler), linked once complete, and
// never freed, so the handler can walk them at any moment. (A larger static
// block would take address space from every run, under a tight ulimit -v too.)
struct Block {
  std::array<std::array<char, kPathBytes>, kSlots> paths;
  std::array<std::atomic<bool>, kSlots> live{};
  std::atomic<Block*> next{nullptr};
};
Block g_first;
std::mutex g_mutex;
// While a commit publishes (SignalHold), a signal is noted, not acted on:
// the renames complete and the run says the signal came late.
std::atomic<bool> g_publishing{false};
std::atomic<int> g_late_signal{0};

void remove_registered_and_reraise(int signal_number) {
  if (g_publishing.load()) {
    g_late_signal.store(signal_number);
    return;
  }
  remove_registered_paths();
  ::signal(signal_number, SIG_DFL);
  ::raise(signal_number);
}

}  // namespace

void remove_registered_paths() noexcept {
  for (Block* block = &g_first; block != nullptr; block = block->next.load()) {
    for (int k = 0; k < kSlots; ++k) {
      if (block->live[k].load()) unlink(block->paths[k].data());
    }
  }
}

std::vector<int> terminating_signals() {
  std::vector<int> signals = {SIGHUP,    SIGINT,  SIGQUIT, SIGUSR1,   SIGUSR2, SIGPIPE, SIGALRM, SIGTERM,
                              SIGSTKFLT, SIGXCPU, SIGXFSZ, SIGVTALRM, SIGPROF, SIGIO,   SIGPWR};
  for (int s = SIGRTMIN; s <= SIGRTMAX; ++s) signals.push_back(s);
  return signals;
}

void install_cleanup_handlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction action {};
    action.sa_handler = remove_registered_and_reraise;
    sigemptyset(&action.sa_mask);
    for (const int s : terminating_signals()) {
      // SIGINT, SIGTERM and SIGHUP always; the others where nothing else
      // has been said of them (an ignored SIGPIPE stays ignored, a
      // library's handler stays).
      struct sigaction current {};
      const bool always = s == SIGINT || s == SIGTERM || s == SIGHUP;
      if (always || (::sigaction(s, nullptr, &current) == 0 && current.sa_handler == SIG_DFL)) {
        ::sigaction(s, &action, nullptr);
      }
    }
  });
}

namespace {

// The signals a hold blocks: every terminating one but those ignored (a
// blocked signal stays pending even when ignored, and would be reported late).
sigset_t held_signals() {
  sigset_t set;
  sigemptyset(&set);
  for (const int s : terminating_signals()) {
    struct sigaction current {};
    if (::sigaction(s, nullptr, &current) == 0 && current.sa_handler == SIG_IGN) continue;
    sigaddset(&set, s);
  }
  return set;
}

}  // namespace

SignalHold::SignalHold() {
  install_cleanup_handlers();
  g_late_signal.store(0);
  g_publishing.store(true);
  held_ = held_signals();
  ::pthread_sigmask(SIG_BLOCK, &held_, &previous_);
}

int SignalHold::release() {
  if (!holding_) return 0;
  holding_ = false;
  // A signal sent to this thread meanwhile is pending: taken here, so that
  // unblocking does not act on it.
  const timespec now{0, 0};
  for (int s; (s = ::sigtimedwait(&held_, nullptr, &now)) > 0;) g_late_signal.store(s);
  g_publishing.store(false);
  ::pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
  return g_late_signal.exchange(0);
}

int register_cleanup_path(const std::string& path) {
  if (path.size() + 1 > kPathBytes) throw std::length_error("path too long: " + path);
  std::lock_guard lock(g_mutex);
  int first_slot = 0;
  for (Block* block = &g_first;; block = block->next.load(), first_slot += kSlots) {
    for (int k = 0; k < kSlots; ++k) {
      if (!block->live[k].load()) {
        std::memcpy(block->paths[k].data(), path.c_str(), path.size() + 1);
        block->live[k].store(true);
        return first_slot + k;
      }
    }
    if (block->next.load() == nullptr) block->next.store(new Block);
  }
}

void forget_cleanup_path(int slot) {
  if (slot < 0) return;
  Block* block = &g_first;
  for (int skip = slot / kSlots; skip > 0 && block != nullptr; --skip) block = block->next.load();
  if (block != nullptr) block->live[slot % kSlots].store(false);
}

}  // namespace extshuffle::io
