// The progress display on stderr (when it is a terminal, or --progress):
// bytes moved through disk so far, rate and ETA, redrawn twice a second by a
// background thread that only reads an atomic counter.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

namespace extshuffle::driver {

class ProgressMeter {
 public:
  // total_bytes: expected bytes read plus written (the schedule's estimate).
  ProgressMeter(std::uint64_t total_bytes, bool enabled);
  ~ProgressMeter();  // stops the thread and clears the line
  ProgressMeter(const ProgressMeter&) = delete;
  ProgressMeter& operator=(const ProgressMeter&) = delete;

  // The counter the executor publishes into (bytes read plus written).
  std::atomic<std::uint64_t>* counter() { return enabled_ ? &done_ : nullptr; }

 private:
  void draw(double seconds);
  std::uint64_t total_;
  bool enabled_;
  std::atomic<std::uint64_t> done_{0};
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace extshuffle::driver
