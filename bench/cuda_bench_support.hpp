// Shared by the parts of cuda_shuffle_bench: checked CUDA calls, medians of
// timed runs, and the one-line report format
//   BENCH <what> device="<GPU>" records=<n> record_bytes=<r> runs=<k>
//         seconds=<median> items_per_s=<x> [key=value ...]
// (one line per measurement; bench/cuda_report.py turns them into the
// tables and the plot of docs/benchmarks.md).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace extshuffle::bench::cuda {

inline void check(cudaError_t error, const char* call, int line) {
  if (error != cudaSuccess) {
    std::fprintf(stderr, "cuda_shuffle_bench: CUDA %s (line %d): %s\n", call, line, cudaGetErrorString(error));
    std::exit(1);
  }
}
#define BENCH_CUDA(call) ::extshuffle::bench::cuda::check((call), #call, __LINE__)

struct Options {
  bool quick = false;
  std::string device_name;
};

// Median of `runs` timed calls after one untimed warm-up.
template <class Run>
double median_host_seconds(int runs, Run&& run) {
  run();
  std::vector<double> seconds;
  for (int r = 0; r < runs; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    run();
    const auto t1 = std::chrono::steady_clock::now();
    seconds.push_back(std::chrono::duration<double>(t1 - t0).count());
  }
  std::sort(seconds.begin(), seconds.end());
  return seconds[seconds.size() / 2];
}

inline void report(const Options& o, const std::string& what, std::uint64_t records, std::size_t record_bytes,
                   int runs, double seconds, const std::string& extra = "") {
  std::printf("BENCH %s device=\"%s\" records=%llu record_bytes=%zu runs=%d seconds=%.6g items_per_s=%.6g%s%s\n",
              what.c_str(), o.device_name.c_str(), static_cast<unsigned long long>(records), record_bytes, runs,
              seconds, static_cast<double>(records) / seconds, extra.empty() ? "" : " ", extra.c_str());
  std::fflush(stdout);
}

// Device bytes free now.
inline std::uint64_t free_device_bytes() {
  std::size_t free_bytes = 0;
  std::size_t total_bytes = 0;
  BENCH_CUDA(cudaMemGetInfo(&free_bytes, &total_bytes));
  return free_bytes;
}

// The sum 0 + 1 + ... + n-1 (mod 2^64): what any permutation of iota sums to.
inline std::uint64_t iota_sum(std::uint64_t n) { return (n % 2 == 0) ? (n / 2) * (n - 1) : n * ((n - 1) / 2); }

// Gives the pool's free blocks back, so the next size finds the memory.
inline void trim_default_pool() {
  int device = 0;
  cudaMemPool_t pool = nullptr;
  if (cudaGetDevice(&device) == cudaSuccess && cudaDeviceGetDefaultMemPool(&pool, device) == cudaSuccess) {
    cudaMemPoolTrimTo(pool, 0);
  }
  cudaGetLastError();
}

// The parts of the benchmark (cuda_shuffle_bench.cu, cuda_pipeline_bench.cpp).
void bench_kernels(const Options& o);           // ceilings, thrust, our kernels at 2^k and 2^k + 1
void bench_production_shapes(const Options& o);  // chunks, leaves and the tail job, both kernels
void bench_pcie(const Options& o);               // pinned host <-> device bandwidth, each way and both
void bench_pipeline(const Options& o);           // shuffle_records host to host, staging swept
void bench_node(const Options& o);               // whole nodes on the device against the CPU

}  // namespace extshuffle::bench::cuda
