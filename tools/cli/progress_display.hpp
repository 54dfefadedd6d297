// The progress line on stderr (when it is a terminal, or --progress): bytes
// moved through disk so far, of the total expected, rate and ETA. The
// library reports; this draws (RunOptions::progress). On a terminal the
// line is redrawn in place; elsewhere (a log file, mpirun's pipe) escape
// codes would be garbage there: a plain line is written at each tenth.
#pragma once

#include <chrono>
#include <cstdint>

#include "extshuffle/job.hpp"

namespace extshuffle::cli {

class ProgressDisplay {
 public:
  ProgressDisplay();
  ~ProgressDisplay() { clear(); }
  ProgressDisplay(const ProgressDisplay&) = delete;
  ProgressDisplay& operator=(const ProgressDisplay&) = delete;

  // The callback for RunOptions::progress; it draws on this display, which must
  // outlive the run. The rate counts from a run's first report.
  ProgressCallback callback();
  // Erases the line, if one was drawn (before other output on stderr).
  void clear();

 private:
  void draw(std::uint64_t done_bytes, std::uint64_t total_bytes);
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  bool drawn_ = false;
  bool terminal_ = false;    // stderr is one: redraw in place
  int tenths_written_ = -1;  // elsewhere: the last tenth written as a line
};

}  // namespace extshuffle::cli
