#include "extshuffle/driver/progress_meter.hpp"

#include <chrono>
#include <utility>

namespace extshuffle::driver {

ProgressMeter::ProgressMeter(std::uint64_t total_bytes, ProgressCallback callback)
    : total_(total_bytes), callback_(std::move(callback)) {
  if (!callback_) return;
  thread_ = std::thread([this] {
    std::unique_lock lock(mutex_);
    callback_(0, total_);  // the passes start
    // Twice a second: often enough for a moving display, rare enough to cost nothing.
    while (!wake_.wait_for(lock, std::chrono::milliseconds(500), [this] { return stop_; })) {
      callback_(done_.load(std::memory_order_relaxed), total_);
    }
  });
}

ProgressMeter::~ProgressMeter() {
  if (!callback_) return;
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

}  // namespace extshuffle::driver
