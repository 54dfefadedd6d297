// Tasks spread over threads for the addressable permutation. std::thread,
// started for one call and joined before it returns, rather than OpenMP:
// the Python package evaluates permutations in processes that then fork
// data loader workers, and a forked copy of a process whose OpenMP pool has
// run hangs in its next parallel region (docs/python.md); threads that
// never outlive a call leave nothing behind for a fork to copy.
#pragma once

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

namespace extshuffle::modes {

// The cores this process may run on (its affinity mask), at least 1.
inline int usable_cores() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

// task(i) for every i < tasks, taken in turn by up to `threads` threads
// (the calling one among them); returns when all are done. The first
// exception a task throws is rethrown here once every thread has stopped
// (tasks not yet taken are skipped then).
template <class Task>
void run_tasks(std::size_t tasks, int threads, Task&& task) {
  const std::size_t workers = std::min<std::size_t>(tasks, static_cast<std::size_t>(std::max(threads, 1)));
  if (workers <= 1) {
    for (std::size_t i = 0; i < tasks; ++i) task(i);
    return;
  }
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr error;
  std::mutex error_mutex;
  auto work = [&] {
    try {
      for (std::size_t i; !failed.load(std::memory_order_relaxed) && (i = next.fetch_add(1)) < tasks;) task(i);
    } catch (...) {
      const std::lock_guard lock(error_mutex);
      if (!error) error = std::current_exception();
      failed = true;
    }
  };
  std::vector<std::thread> helpers;
  helpers.reserve(workers - 1);
  for (std::size_t t = 1; t < workers; ++t) {
    try {
      helpers.emplace_back(work);
    } catch (const std::system_error&) {
      break;  // no thread to be had: the ones started (and this one) take every task
    }
  }
  work();
  for (std::thread& helper : helpers) helper.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace extshuffle::modes
