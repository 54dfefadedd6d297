// GPU throughput of the bijective shuffle beside its ceilings, in one run
// (DESIGN.md 6; Mitchell et al. section 6 measures the same set): device copy
// bandwidth, a random 8-byte gather (the ceiling of any gather-based shuffle),
// thrust::shuffle_copy, our kernel (a) on one job, our kernel (b) on leaves of
// 2^16 records, and the whole host-to-host call through pinned buffers. Sizes
// 2^k and 2^k + 1 uint64 records, k = 16..30 (--quick: 16..20), sizes that do
// not fit the device skipped. Device timings are cudaEvent medians; the
// host-to-host timing is a steady_clock median. One line per measurement:
//   BENCH <what> records=<n> record_bytes=8 runs=<r> seconds=<median> items_per_s=<x>
// Kernel outputs are checked (sum of the shuffled iota) so a broken kernel
// cannot report a speed. Exit 1 without a usable GPU or on any CUDA error.
#include <cuda_runtime.h>
#include <thrust/execution_policy.h>
#include <thrust/random.h>
#include <thrust/reduce.h>
#include <thrust/shuffle.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "device/cuda/bijective_shuffle_kernels.cuh"
#include "extshuffle/device/shuffle_records.hpp"

namespace {

namespace k = extshuffle::device::cuda::kernels;
namespace core = extshuffle::core;
using Word = unsigned long long;

constexpr std::uint64_t kLeafRecords = std::uint64_t{1} << 16;
constexpr std::uint64_t kSeed = 42;
constexpr std::uint64_t kMarginBytes = std::uint64_t{512} << 20;
// Host-to-host runs stop at 2^28 + 1 records (2 GiB a buffer) to bound the
// pinned memory and the time of a full run.
constexpr std::uint64_t kMaxHostToHostRecords = (std::uint64_t{1} << 28) + 1;

void check(cudaError_t error, const char* call, int line) {
  if (error != cudaSuccess) {
    std::fprintf(stderr, "cuda_shuffle_bench: CUDA %s (line %d): %s\n", call, line,
                 cudaGetErrorString(error));
    std::exit(1);
  }
}
#define BENCH_CUDA(call) check((call), #call, __LINE__)
#define BENCH_LAUNCH(name) check(cudaGetLastError(), name, __LINE__)

__global__ void iota_kernel(Word* data, std::uint64_t n) {
  const std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) data[i] = i;
}

__device__ __forceinline__ std::uint64_t mix64(std::uint64_t x) {  // SplitMix64 finaliser
  x ^= x >> 30;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 27;
  x *= 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// out[i] = in[h(i)] with h a hash onto [0, n): n random 8-byte reads and n
// coalesced writes, nothing else. Not a permutation; the ceiling.
__global__ void random_gather_kernel(const Word* __restrict__ in, Word* __restrict__ out,
                                     std::uint64_t n, std::uint64_t salt) {
  const std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = __ldg(in + __umul64hi(mix64(i ^ salt), n));
}

unsigned blocks_for(std::uint64_t n, unsigned threads) {
  return static_cast<unsigned>((n + threads - 1) / threads);
}

// Median seconds of `runs` timed launches on `stream`, after one untimed run.
template <class Launch>
double median_device_seconds(int runs, cudaStream_t stream, Launch&& launch) {
  cudaEvent_t start, stop;
  BENCH_CUDA(cudaEventCreate(&start));
  BENCH_CUDA(cudaEventCreate(&stop));
  launch();
  BENCH_CUDA(cudaStreamSynchronize(stream));
  std::vector<double> seconds;
  for (int r = 0; r < runs; ++r) {
    BENCH_CUDA(cudaEventRecord(start, stream));
    launch();
    BENCH_CUDA(cudaEventRecord(stop, stream));
    BENCH_CUDA(cudaEventSynchronize(stop));
    float ms = 0;
    BENCH_CUDA(cudaEventElapsedTime(&ms, start, stop));
    seconds.push_back(ms / 1e3);
  }
  BENCH_CUDA(cudaEventDestroy(start));
  BENCH_CUDA(cudaEventDestroy(stop));
  std::sort(seconds.begin(), seconds.end());
  return seconds[seconds.size() / 2];
}

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

void report(const char* what, std::uint64_t n, int runs, double seconds, const char* extra = "") {
  std::printf("BENCH %s records=%llu record_bytes=8 runs=%d seconds=%.6g items_per_s=%.6g%s\n", what,
              static_cast<unsigned long long>(n), runs, seconds, static_cast<double>(n) / seconds,
              extra);
  std::fflush(stdout);
}

// The output of a shuffle of iota must sum to 0 + 1 + ... + n-1 (mod 2^64).
void expect_permutation_sum(const char* what, const Word* d_out, std::uint64_t n, cudaStream_t stream) {
  const Word sum = thrust::reduce(thrust::cuda::par.on(stream), d_out, d_out + n, Word{0});
  const Word expected = (n % 2 == 0) ? (n / 2) * (n - 1) : n * ((n - 1) / 2);
  if (sum != expected) {
    std::fprintf(stderr, "cuda_shuffle_bench: %s on %llu records: output is not a permutation\n", what,
                 static_cast<unsigned long long>(n));
    std::exit(1);
  }
}

void trim_default_pool() {
  int device = 0;
  cudaMemPool_t pool = nullptr;
  if (cudaGetDevice(&device) == cudaSuccess && cudaDeviceGetDefaultMemPool(&pool, device) == cudaSuccess) {
    cudaMemPoolTrimTo(pool, 0);
  }
  cudaGetLastError();  // pools unsupported: nothing to trim
}

// The whole public call, host buffers in pinned memory, transfers included.
void bench_host_to_host(std::uint64_t n, int runs, const core::VariablePhilox& f) {
  const std::uint64_t bytes = n * sizeof(Word);
  Word* h_in = nullptr;
  Word* h_out = nullptr;
  BENCH_CUDA(cudaMallocHost(&h_in, bytes));
  BENCH_CUDA(cudaMallocHost(&h_out, bytes));
  for (std::uint64_t i = 0; i < n; ++i) h_in[i] = i;
  const extshuffle::device::ShuffleJob job{reinterpret_cast<const std::byte*>(h_in),
                                           reinterpret_cast<std::byte*>(h_out), n, f};
  const double seconds = median_host_seconds(runs, [&] {
    extshuffle::device::shuffle_records(extshuffle::device::Device::kCuda, job, sizeof(Word));
  });
  Word sum = 0;
  for (std::uint64_t i = 0; i < n; ++i) sum += h_out[i];
  const Word expected = (n % 2 == 0) ? (n / 2) * (n - 1) : n * ((n - 1) / 2);
  if (sum != expected) {
    std::fprintf(stderr, "cuda_shuffle_bench: host_to_host on %llu records: output is not a permutation\n",
                 static_cast<unsigned long long>(n));
    std::exit(1);
  }
  report("host_to_host_pinned", n, runs, seconds);
  BENCH_CUDA(cudaFreeHost(h_in));
  BENCH_CUDA(cudaFreeHost(h_out));
  trim_default_pool();  // the back end keeps its buffers pooled; the next size needs the memory
}

void bench_size(std::uint64_t n, bool quick, cudaStream_t stream) {
  const std::uint64_t bytes = n * sizeof(Word);
  const int runs = quick ? 3 : (n <= (std::uint64_t{1} << 24) ? 11 : 5);
  const auto f = core::shuffle_bijection(
      kSeed, core::StreamAddress{core::NodeId{0, 0}, core::Purpose::kChunkShuffle, 0}, n);
  const k::BijectionParams params = k::make_bijection_params(f);
  const std::uint64_t tiles = k::tiles_for_domain(f.domain_size());
  std::size_t state_bytes = 0;
  BENCH_CUDA(k::TileStateT::AllocationSize(static_cast<int>(tiles), state_bytes));
  state_bytes = (state_bytes + 255) / 256 * 256;
  const std::uint64_t leaves = (n + kLeafRecords - 1) / kLeafRecords;

  std::size_t free_bytes = 0;
  std::size_t total_bytes = 0;
  BENCH_CUDA(cudaMemGetInfo(&free_bytes, &total_bytes));
  const std::uint64_t need = 2 * bytes + state_bytes + 256 + leaves * sizeof(k::BatchJob) + kMarginBytes;
  if (need > free_bytes) {
    std::fprintf(stderr, "# skipping %llu records: needs %llu bytes of device memory, %llu free\n",
                 static_cast<unsigned long long>(n), static_cast<unsigned long long>(need),
                 static_cast<unsigned long long>(free_bytes));
    return;
  }

  Word* d_in = nullptr;
  Word* d_out = nullptr;
  std::byte* d_state = nullptr;
  k::BatchJob* d_leaves = nullptr;
  BENCH_CUDA(cudaMalloc(&d_in, bytes));
  BENCH_CUDA(cudaMalloc(&d_out, bytes));
  BENCH_CUDA(cudaMalloc(&d_state, state_bytes + 256));
  BENCH_CUDA(cudaMalloc(&d_leaves, leaves * sizeof(k::BatchJob)));
  iota_kernel<<<blocks_for(n, 256), 256, 0, stream>>>(d_in, n);
  BENCH_LAUNCH("iota_kernel");
  const auto* in_bytes = reinterpret_cast<const std::byte*>(d_in);
  auto* out_bytes = reinterpret_cast<std::byte*>(d_out);

  // 1. Device-to-device copy: the bandwidth floor (bytes_per_s counts read + write).
  {
    const double s = median_device_seconds(runs, stream, [&] {
      BENCH_CUDA(cudaMemcpyAsync(d_out, d_in, bytes, cudaMemcpyDeviceToDevice, stream));
    });
    char extra[64];
    std::snprintf(extra, sizeof(extra), " bytes_per_s=%.6g", 2.0 * static_cast<double>(bytes) / s);
    report("device_copy", n, runs, s, extra);
  }

  // 2. Random 8-byte gather: the ceiling of any gather-based shuffle.
  {
    std::uint64_t salt = 0;
    const double s = median_device_seconds(runs, stream, [&] {
      random_gather_kernel<<<blocks_for(n, 256), 256, 0, stream>>>(d_in, d_out, n, ++salt);
      BENCH_LAUNCH("random_gather_kernel");
    });
    report("random_gather", n, runs, s);
  }

  // 3. thrust::shuffle_copy (CCCL's own bijective shuffle).
  {
    thrust::default_random_engine engine(static_cast<unsigned>(kSeed));
    const double s = median_device_seconds(runs, stream, [&] {
      thrust::shuffle_copy(thrust::cuda::par_nosync.on(stream), d_in, d_in + n, d_out, engine);
    });
    expect_permutation_sum("thrust_shuffle_copy", d_out, n, stream);
    report("thrust_shuffle_copy", n, runs, s);
  }

  // 4. Kernel (a): one job, fused evaluation + decoupled look-back scan + gather.
  {
    k::TileStateT tile_state;
    BENCH_CUDA(tile_state.Init(static_cast<int>(tiles), d_state, state_bytes));
    auto* counter = reinterpret_cast<unsigned int*>(d_state + state_bytes);
    const double s = median_device_seconds(runs, stream, [&] {
      k::init_lookback_kernel<<<blocks_for(tiles, k::kBlockThreads), k::kBlockThreads, 0, stream>>>(
          tile_state, static_cast<int>(tiles), counter);
      BENCH_LAUNCH("init_lookback_kernel");
      k::shuffle_single_kernel<k::TypedRecords<Word>>
          <<<static_cast<unsigned>(tiles), k::kBlockThreads, 0, stream>>>(
              params, n, in_bytes, out_bytes, k::TypedRecords<Word>{}, tile_state, counter);
      BENCH_LAUNCH("shuffle_single_kernel");
    });
    expect_permutation_sum("shuffle_single", d_out, n, stream);
    report("shuffle_single", n, runs, s);
  }

  // 5. Kernel (b): the same records as leaves of 2^16, each with its own key.
  {
    std::vector<k::BatchJob> jobs;
    jobs.reserve(leaves);
    for (std::uint64_t j = 0; j < leaves; ++j) {
      const std::uint64_t first = j * kLeafRecords;
      const std::uint64_t records = std::min(kLeafRecords, n - first);
      const auto leaf = core::shuffle_bijection(
          kSeed, core::StreamAddress{core::NodeId{1, first}, core::Purpose::kLeafShuffle, 0}, records);
      jobs.push_back({k::make_bijection_params(leaf), records, first * sizeof(Word)});
    }
    BENCH_CUDA(cudaMemcpyAsync(d_leaves, jobs.data(), jobs.size() * sizeof(k::BatchJob),
                               cudaMemcpyHostToDevice, stream));
    const double s = median_device_seconds(runs, stream, [&] {
      k::shuffle_batch_kernel<k::TypedRecords<Word>>
          <<<static_cast<unsigned>(leaves), k::kBlockThreads, 0, stream>>>(
              d_leaves, in_bytes, out_bytes, k::TypedRecords<Word>{});
      BENCH_LAUNCH("shuffle_batch_kernel");
    });
    expect_permutation_sum("shuffle_batch", d_out, n, stream);
    char extra[64];
    std::snprintf(extra, sizeof(extra), " leaf_records=%llu",
                  static_cast<unsigned long long>(kLeafRecords));
    report("shuffle_batch", n, runs, s, extra);
  }

  BENCH_CUDA(cudaStreamSynchronize(stream));
  BENCH_CUDA(cudaFree(d_in));
  BENCH_CUDA(cudaFree(d_out));
  BENCH_CUDA(cudaFree(d_state));
  BENCH_CUDA(cudaFree(d_leaves));

  // 6. Host to host through the public interface (pinned buffers).
  if (n <= kMaxHostToHostRecords) bench_host_to_host(n, runs, f);
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      quick = true;
    } else {
      std::fprintf(stderr, "usage: cuda_shuffle_bench [--quick]\n");
      return 2;
    }
  }
  if (!extshuffle::device::cuda_available()) {
    std::fprintf(stderr, "cuda_shuffle_bench: no usable CUDA device: %s\n",
                 extshuffle::device::cuda_unavailable_reason().c_str());
    return 1;
  }
  int device = 0;
  cudaDeviceProp props{};
  BENCH_CUDA(cudaGetDevice(&device));
  BENCH_CUDA(cudaGetDeviceProperties(&props, device));
  std::fprintf(stderr, "# device %s, %d multiprocessors, %llu bytes of memory\n", props.name,
               props.multiProcessorCount, static_cast<unsigned long long>(props.totalGlobalMem));
  cudaStream_t stream = nullptr;
  BENCH_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const int max_log2 = quick ? 20 : 30;
  for (int log2 = 16; log2 <= max_log2; ++log2) {
    bench_size(std::uint64_t{1} << log2, quick, stream);
    bench_size((std::uint64_t{1} << log2) + 1, quick, stream);
  }
  BENCH_CUDA(cudaStreamDestroy(stream));
  return 0;
}
