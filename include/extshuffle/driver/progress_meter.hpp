// Progress of a run for RunOptions::progress: a background thread reads the
// counter the walk publishes into (bytes read plus written) and hands it
// to the caller's callback twice a second. The library draws nothing; the
// CLI does (tools/cli/progress_display.hpp).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

#include "extshuffle/job.hpp"

namespace extshuffle::driver {

class ProgressMeter {
 public:
  // total_bytes: expected bytes read plus written (the schedule's estimate).
  // An empty callback starts no thread and counter() is null.
  ProgressMeter(std::uint64_t total_bytes, ProgressCallback callback);
  ~ProgressMeter();  // stops the thread
  ProgressMeter(const ProgressMeter&) = delete;
  ProgressMeter& operator=(const ProgressMeter&) = delete;

  // The counter the walk publishes into (bytes read plus written).
  std::atomic<std::uint64_t>* counter() { return callback_ ? &done_ : nullptr; }

 private:
  std::uint64_t total_;
  ProgressCallback callback_;
  std::atomic<std::uint64_t> done_{0};
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace extshuffle::driver
