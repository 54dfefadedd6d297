// Records/s of the CPU bijective shuffle against std::shuffle (mt19937_64) in
// the same run, and of the whole plan executed in RAM for several (L, F).
// Prints one line per measurement: BENCH <what> key=value...
#include <cstdio>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "bench_timer.hpp"
#include "extshuffle/ioperm/reference_shuffle.hpp"

using namespace extshuffle;

int main(int argc, char** argv) {
  // --quick: small sizes only; --skip-plan: only the bijective shuffle table.
  bool quick = false, skip_plan = false;
  for (int a = 1; a < argc; ++a) {
    quick = quick || std::strcmp(argv[a], "--quick") == 0;
    skip_plan = skip_plan || std::strcmp(argv[a], "--skip-plan") == 0;
  }
  const int repeats = quick ? 1 : 3;
  const std::vector<std::uint64_t> sizes = {1ull << 16, 1ull << 20, 1ull << 26, (1ull << 26) + 1};
  for (std::uint64_t n : sizes) {
    if (quick && n > (1ull << 20)) continue;
    std::vector<std::uint64_t> input(n), output(n);
    std::iota(input.begin(), input.end(), 0);
    const int reps = n <= (1ull << 20) ? repeats * 20 : repeats;
    for (int threads : {1, 2}) {
      const auto f = core::shuffle_bijection(42, core::StreamAddress{}, n);
      const device::ShuffleJob job{reinterpret_cast<const std::byte*>(input.data()),
                                   reinterpret_cast<std::byte*>(output.data()), n, f};
      const double s = bench::best_seconds(reps, [&] { device::shuffle_records(device::Device::kCpu, job, 8, threads); });
      std::printf("BENCH bijective_shuffle records=%llu threads=%d seconds=%.6f records_per_s=%.4g\n",
                  static_cast<unsigned long long>(n), threads, s, n / s);
    }
    std::mt19937_64 rng(42);
    std::vector<std::uint64_t> data = input;
    const double s = bench::best_seconds(reps, [&] { std::shuffle(data.begin(), data.end(), rng); });
    std::printf("BENCH std_shuffle records=%llu threads=1 seconds=%.6f records_per_s=%.4g\n",
                static_cast<unsigned long long>(n), s, n / s);
    std::fflush(stdout);
  }
  if (skip_plan) return 0;
  // The whole plan in RAM, 8-byte records, for candidate constants.
  const std::uint64_t n = quick ? (1ull << 20) : (1ull << 26);
  std::vector<std::uint64_t> input(n), output(n);
  std::iota(input.begin(), input.end(), 0);
  const auto in = std::as_bytes(std::span(input));
  const auto out = std::as_writable_bytes(std::span(output));
  for (std::uint64_t leaf_log : {14, 16, 18, 20}) {
    for (std::uint64_t fanout_log : {6, 8, 10, 12}) {
      const core::PlanConstants c{1ull << leaf_log, 1ull << fanout_log};
      const double s = bench::best_seconds(repeats, [&] {
        ioperm::shuffle_in_memory(in, out, 8, 42, ioperm::ReferenceOptions{c, device::Device::kCpu, 2});
      });
      std::printf("BENCH plan_in_memory records=%llu leaf_records=%llu fanout=%llu levels=%u threads=2 "
                  "seconds=%.4f records_per_s=%.4g\n",
                  static_cast<unsigned long long>(n), static_cast<unsigned long long>(c.leaf_records),
                  static_cast<unsigned long long>(c.max_fanout), core::plan_levels(n, c), s, n / s);
      std::fflush(stdout);
    }
  }
  return 0;
}
