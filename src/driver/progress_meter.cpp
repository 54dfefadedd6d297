#include "progress_meter.hpp"

#include <chrono>
#include <cstdio>

namespace extshuffle::driver {
namespace {

void format_bytes(char* out, std::size_t size, double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024 && u < 4) {
    bytes /= 1024;
    ++u;
  }
  std::snprintf(out, size, "%.1f %s", bytes, units[u]);
}

}  // namespace

ProgressMeter::ProgressMeter(std::uint64_t total_bytes, bool enabled) : total_(total_bytes), enabled_(enabled) {
  if (!enabled_) return;
  thread_ = std::thread([this] {
    const auto start = std::chrono::steady_clock::now();
    std::unique_lock lock(mutex_);
    while (!wake_.wait_for(lock, std::chrono::milliseconds(500), [this] { return stop_; })) {
      draw(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
  });
}

ProgressMeter::~ProgressMeter() {
  if (!enabled_) return;
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
  std::fputs("\r\033[K", stderr);
}

void ProgressMeter::draw(double seconds) {
  const double done = static_cast<double>(done_.load(std::memory_order_relaxed));
  const double rate = seconds > 0 ? done / seconds : 0;
  char done_text[32], total_text[32], rate_text[32], eta[32] = "--:--";
  format_bytes(done_text, sizeof done_text, done);
  format_bytes(total_text, sizeof total_text, static_cast<double>(total_));
  format_bytes(rate_text, sizeof rate_text, rate);
  if (rate > 0 && done < total_) {
    const auto left = static_cast<long>((total_ - done) / rate);
    std::snprintf(eta, sizeof eta, "%ld:%02ld", left / 60, left % 60);
  }
  const double percent = total_ > 0 ? 100.0 * done / total_ : 100.0;
  std::fprintf(stderr, "\r\033[Kextshuffle: %s / %s (%.0f%%), %s/s, ETA %s", done_text, total_text,
               percent > 100 ? 100.0 : percent, rate_text, eta);
  std::fflush(stderr);
}

}  // namespace extshuffle::driver
