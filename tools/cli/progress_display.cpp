#include "progress_display.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace extshuffle::cli {
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

ProgressDisplay::ProgressDisplay() : terminal_(::isatty(2) == 1) {}

ProgressCallback ProgressDisplay::callback() {
  return [this](std::uint64_t done_bytes, std::uint64_t total_bytes) { draw(done_bytes, total_bytes); };
}

void ProgressDisplay::clear() {
  if (!drawn_ || !terminal_) return;
  std::fputs("\r\033[K", stderr);
  drawn_ = false;
}

void ProgressDisplay::draw(std::uint64_t done_bytes, std::uint64_t total_bytes) {
  // A run's first report (nothing done yet) starts its clock; it draws
  // nothing, so that a run shorter than the first tick leaves no trace.
  if (done_bytes == 0 && !drawn_) {
    start_ = std::chrono::steady_clock::now();
    return;
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double done = static_cast<double>(done_bytes), total = static_cast<double>(total_bytes);
  const double rate = seconds > 0 ? done / seconds : 0;
  char done_text[32], total_text[32], rate_text[32], eta[32] = "--:--";
  format_bytes(done_text, sizeof done_text, done);
  format_bytes(total_text, sizeof total_text, total);
  format_bytes(rate_text, sizeof rate_text, rate);
  if (rate > 0 && done < total) {
    const auto left = static_cast<long>((total - done) / rate);
    std::snprintf(eta, sizeof eta, "%ld:%02ld", left / 60, left % 60);
  }
  const double percent = std::min(100.0, total > 0 ? 100.0 * done / total : 100.0);
  if (!terminal_) {
    const int tenths = static_cast<int>(percent / 10);
    if (tenths <= tenths_written_) return;
    tenths_written_ = tenths;
  }
  std::fprintf(stderr, "%sextshuffle: %s / %s (%.0f%%), %s/s, ETA %s%s", terminal_ ? "\r\033[K" : "", done_text,
               total_text, percent, rate_text, eta, terminal_ ? "" : "\n");
  std::fflush(stderr);
  drawn_ = true;
}

}  // namespace extshuffle::cli
