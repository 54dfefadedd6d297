// Wall time by phase (reading, shuffling, scattering, writing) for --stats.
#pragma once

#include <chrono>

namespace extshuffle::ioperm {

using Clock = std::chrono::steady_clock;
inline double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Adds the seconds from construction to destruction to `total`.
class PhaseTimer {
 public:
  explicit PhaseTimer(double& total) : total_(total), start_(Clock::now()) {}
  PhaseTimer(const PhaseTimer&) = delete;
  PhaseTimer& operator=(const PhaseTimer&) = delete;
  ~PhaseTimer() { total_ += since(start_); }

 private:
  double& total_;
  Clock::time_point start_;
};

// Adds to `total` the seconds of its scope less what `nested` (a phase timed
// inside it, such as the writes of output handed on while shuffling) gained
// meanwhile.
class PhaseTimerExcluding {
 public:
  PhaseTimerExcluding(double& total, const double& nested)
      : total_(total), nested_(nested), nested_before_(nested), start_(Clock::now()) {}
  PhaseTimerExcluding(const PhaseTimerExcluding&) = delete;
  PhaseTimerExcluding& operator=(const PhaseTimerExcluding&) = delete;
  ~PhaseTimerExcluding() { total_ += since(start_) - (nested_ - nested_before_); }

 private:
  double& total_;
  const double& nested_;
  double nested_before_;
  Clock::time_point start_;
};

}  // namespace extshuffle::ioperm
