#include "worker_threads.hpp"

#include <thread>
#include <vector>

namespace extshuffle::cli {

void start_worker_threads(int threads) {
  std::vector<std::thread> probes;
  try {
    for (int t = 1; t < threads; ++t) probes.emplace_back([] {});
  } catch (...) {
    for (std::thread& probe : probes) probe.join();
    throw;
  }
  for (std::thread& probe : probes) probe.join();
#pragma omp parallel num_threads(threads)
  {}
}

}  // namespace extshuffle::cli
