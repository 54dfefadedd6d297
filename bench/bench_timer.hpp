// Timing helpers for the benchmark programs: best-of-k wall time, so the
// noise of this shared machine inflates figures as little as possible.
#pragma once

#include <algorithm>
#include <chrono>
#include <limits>

namespace extshuffle::bench {

template <class F>
double best_seconds(int repeats, F&& f) {
  double best = std::numeric_limits<double>::infinity();
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    const auto t1 = std::chrono::steady_clock::now();
    best = std::min(best, std::chrono::duration<double>(t1 - t0).count());
  }
  return best;
}

}  // namespace extshuffle::bench
