#include "extshuffle/io/cleanup_registry.hpp"

#include <signal.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstring>
#include <mutex>
#include <stdexcept>

namespace extshuffle::io {
namespace {

// extshuffle-mpi registers every piece of a sharded output (its hidden
// file is named, so the ranks can share it): thousands of shards. The
// slots are zero-initialised static storage (32 MiB of address space), and
// only the pages of slots in use become resident.
constexpr int kSlots = 8192;
constexpr std::size_t kPathBytes = 4096;

// Fixed storage so the handler never allocates; a slot is live while its flag is set.
std::array<std::array<char, kPathBytes>, kSlots> g_paths;
std::array<std::atomic<bool>, kSlots> g_live{};
std::mutex g_mutex;

void remove_registered_and_reraise(int signal_number) {
  remove_registered_paths();
  ::signal(signal_number, SIG_DFL);
  ::raise(signal_number);
}

}  // namespace

void remove_registered_paths() noexcept {
  for (int k = 0; k < kSlots; ++k) {
    if (g_live[k].load()) unlink(g_paths[k].data());
  }
}

void install_cleanup_handlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction action {};
    action.sa_handler = remove_registered_and_reraise;
    sigemptyset(&action.sa_mask);
    for (int s : {SIGINT, SIGTERM, SIGHUP}) sigaction(s, &action, nullptr);
  });
}

int register_cleanup_path(const std::string& path) {
  if (path.size() + 1 > kPathBytes) throw std::length_error("path too long: " + path);
  std::lock_guard lock(g_mutex);
  for (int k = 0; k < kSlots; ++k) {
    if (!g_live[k].load()) {
      std::memcpy(g_paths[k].data(), path.c_str(), path.size() + 1);
      g_live[k].store(true);
      return k;
    }
  }
  throw std::runtime_error("too many temporary files registered for cleanup");
}

void forget_cleanup_path(int slot) {
  if (slot >= 0 && slot < kSlots) g_live[slot].store(false);
}

}  // namespace extshuffle::io
