// GPU throughput of the bijective shuffle beside its ceilings, in one run
// (docs/conventions.md, Benchmarks; Mitchell et al. section 6 measures the same set), and of the
// whole CUDA back end (cuda_pipeline_bench.cpp). Sections (--section, all by
// default; --quick: small sizes and few runs, for a smoke test):
//  - kernels: device copy bandwidth, a random 8-byte gather (the ceiling of
//    any gather-based shuffle), thrust::shuffle_copy and our single-pass
//    kernel on one job, 2^k and 2^k + 1 uint64 records, k = 16..30;
//  - shapes: the production shapes of permutation version 2 (L = 2^20):
//    J chunks of 2^20 records, J leaves of 3/4 L, the tail job, on both the
//    single-pass ("tiles") and the batched kernel: the lines that choose
//    KernelChoice (src/device/cuda/kernel_launch.hpp);
//  - pcie, pipeline, node: see cuda_pipeline_bench.cpp.
// Device timings are cudaEvent medians, host ones steady_clock medians. One
// line per measurement (cuda_bench_support.hpp). Kernel outputs are checked
// (sum of the shuffled iota) so a broken kernel cannot report a speed. Exit
// 1 without a usable GPU or on any CUDA error.
#include <thrust/execution_policy.h>
#include <thrust/random.h>
#include <thrust/reduce.h>
#include <thrust/shuffle.h>

#include <cstring>
#include <functional>
#include <string>

#include "cuda_bench_support.hpp"
#include "device/cuda/bijective_shuffle_kernels.cuh"
#include "extshuffle/device/shuffle_records.hpp"

namespace extshuffle::bench::cuda {
namespace {

namespace k = extshuffle::device::cuda::kernels;
using Word = unsigned long long;
constexpr std::uint64_t kSeed = 42;
constexpr std::uint64_t kLeafRecords = std::uint64_t{1} << 20;  // core::kPlanV2.leaf_records
constexpr std::uint64_t kMarginBytes = std::uint64_t{512} << 20;
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
__global__ void random_gather_kernel(const Word* __restrict__ in, Word* __restrict__ out, std::uint64_t n,
                                     std::uint64_t salt) {
  const std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = __ldg(in + __umul64hi(mix64(i ^ salt), n));
}

unsigned blocks_for(std::uint64_t n, unsigned threads) { return static_cast<unsigned>((n + threads - 1) / threads); }

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

// The output of a shuffle of iota must sum to 0 + 1 + ... + n-1 (mod 2^64).
void expect_permutation_sum(const char* what, const Word* d_out, std::uint64_t n, cudaStream_t stream) {
  const Word sum = thrust::reduce(thrust::cuda::par.on(stream), d_out, d_out + n, Word{0});
  if (sum != iota_sum(n)) {
    std::fprintf(stderr, "cuda_shuffle_bench: %s on %llu records: output is not a permutation\n", what,
                 static_cast<unsigned long long>(n));
    std::exit(1);
  }
}

// Device buffers for one size: input (iota), output, job descriptors and
// look-back state, freed on destruction.
struct Resident {
  Resident(std::uint64_t n, std::size_t jobs, std::uint64_t tiles, cudaStream_t stream) : n(n) {
    BENCH_CUDA(k::TileStateT::AllocationSize(static_cast<int>(tiles), state_bytes));
    state_bytes = (state_bytes + 255) / 256 * 256;
    BENCH_CUDA(cudaMalloc(&d_in, n * sizeof(Word)));
    BENCH_CUDA(cudaMalloc(&d_out, n * sizeof(Word)));
    BENCH_CUDA(cudaMalloc(&d_state, state_bytes + 256));
    BENCH_CUDA(cudaMalloc(&d_jobs, jobs * sizeof(k::KernelJob)));
    BENCH_CUDA(cudaMalloc(&d_first_tiles, (jobs + 1) * sizeof(std::uint64_t)));
    iota_kernel<<<blocks_for(n, 256), 256, 0, stream>>>(d_in, n);
    BENCH_LAUNCH("iota_kernel");
  }
  ~Resident() {
    cudaDeviceSynchronize();
    cudaFree(d_in);
    cudaFree(d_out);
    cudaFree(d_state);
    cudaFree(d_jobs);
    cudaFree(d_first_tiles);
  }
  static bool fits(std::uint64_t n, std::size_t jobs) {
    const std::uint64_t need = 2 * n * sizeof(Word) + 16 * (2 * n / 4096 + jobs + 64) + jobs * 200 + kMarginBytes;
    return need <= free_device_bytes();
  }
  std::uint64_t n;
  std::size_t state_bytes = 0;
  Word* d_in = nullptr;
  Word* d_out = nullptr;
  std::byte* d_state = nullptr;
  k::KernelJob* d_jobs = nullptr;
  std::uint64_t* d_first_tiles = nullptr;
};

// Jobs laid end to end over `resident`, their descriptors copied in; returns their tiles.
std::uint64_t upload_jobs(Resident& d, const std::vector<std::uint64_t>& sizes, cudaStream_t stream) {
  std::vector<k::KernelJob> jobs;
  std::vector<std::uint64_t> first_tiles;
  std::uint64_t first = 0;
  std::uint64_t tiles = 0;
  for (std::size_t j = 0; j < sizes.size(); ++j) {
    const auto f = core::shuffle_bijection(kSeed, {{1, first}, core::Purpose::kChunkShuffle, j}, sizes[j]);
    jobs.push_back({k::make_bijection_params(f), sizes[j], first * sizeof(Word)});
    first_tiles.push_back(tiles);
    tiles += k::tiles_for_domain(f.domain_size());
    first += sizes[j];
  }
  first_tiles.push_back(tiles);
  BENCH_CUDA(cudaMemcpyAsync(d.d_jobs, jobs.data(), jobs.size() * sizeof(k::KernelJob), cudaMemcpyHostToDevice, stream));
  BENCH_CUDA(cudaMemcpyAsync(d.d_first_tiles, first_tiles.data(), first_tiles.size() * sizeof(std::uint64_t),
                             cudaMemcpyHostToDevice, stream));
  BENCH_CUDA(cudaStreamSynchronize(stream));
  return tiles;
}

// The single-pass kernel over the uploaded jobs (one launch, as kernel_launch.cu).
void launch_tiles(Resident& d, std::size_t jobs, std::uint64_t tiles, cudaStream_t stream) {
  k::TileStateT tile_state;
  BENCH_CUDA(tile_state.Init(static_cast<int>(tiles), d.d_state, d.state_bytes));
  auto* counter = reinterpret_cast<unsigned int*>(d.d_state + d.state_bytes);
  k::init_lookback_kernel<<<blocks_for(tiles, k::kBlockThreads), k::kBlockThreads, 0, stream>>>(
      tile_state, static_cast<int>(tiles), counter);
  BENCH_LAUNCH("init_lookback_kernel");
  k::shuffle_tiles_kernel<k::TypedRecords<Word>><<<static_cast<unsigned>(tiles), k::kBlockThreads, 0, stream>>>(
      d.d_jobs, d.d_first_tiles, static_cast<std::uint32_t>(jobs), reinterpret_cast<const std::byte*>(d.d_in),
      reinterpret_cast<std::byte*>(d.d_out), k::TypedRecords<Word>{}, tile_state, counter);
  BENCH_LAUNCH("shuffle_tiles_kernel");
}

void launch_batch(Resident& d, std::size_t jobs, cudaStream_t stream) {
  k::shuffle_batch_kernel<k::TypedRecords<Word>><<<static_cast<unsigned>(jobs), k::kBlockThreads, 0, stream>>>(
      d.d_jobs, reinterpret_cast<const std::byte*>(d.d_in), reinterpret_cast<std::byte*>(d.d_out),
      k::TypedRecords<Word>{});
  BENCH_LAUNCH("shuffle_batch_kernel");
}

void bench_size(const Options& o, std::uint64_t n, cudaStream_t stream) {
  const int runs = o.quick ? 3 : (n <= (std::uint64_t{1} << 24) ? 11 : 5);
  if (!Resident::fits(n, 1)) {
    std::fprintf(stderr, "# skipping %llu records: not enough device memory\n", static_cast<unsigned long long>(n));
    return;
  }
  const auto f = core::shuffle_bijection(kSeed, {{1, 0}, core::Purpose::kChunkShuffle, 0}, n);
  Resident d(n, 1, k::tiles_for_domain(f.domain_size()), stream);
  const std::uint64_t bytes = n * sizeof(Word);
  // 1. Device-to-device copy: the bandwidth floor (bytes_per_s counts read + write).
  double s = median_device_seconds(runs, stream, [&] {
    BENCH_CUDA(cudaMemcpyAsync(d.d_out, d.d_in, bytes, cudaMemcpyDeviceToDevice, stream));
  });
  report(o, "device_copy", n, sizeof(Word), runs, s, "bytes_per_s=" + std::to_string(2.0 * bytes / s));
  // 2. Random 8-byte gather: the ceiling of any gather-based shuffle.
  std::uint64_t salt = 0;
  s = median_device_seconds(runs, stream, [&] {
    random_gather_kernel<<<blocks_for(n, 256), 256, 0, stream>>>(d.d_in, d.d_out, n, ++salt);
    BENCH_LAUNCH("random_gather_kernel");
  });
  report(o, "random_gather", n, sizeof(Word), runs, s);
  // 3. thrust::shuffle_copy (CCCL's own bijective shuffle).
  thrust::default_random_engine engine(static_cast<unsigned>(kSeed));
  s = median_device_seconds(runs, stream, [&] {
    thrust::shuffle_copy(thrust::cuda::par_nosync.on(stream), d.d_in, d.d_in + n, d.d_out, engine);
  });
  expect_permutation_sum("thrust_shuffle_copy", d.d_out, n, stream);
  report(o, "thrust_shuffle_copy", n, sizeof(Word), runs, s);
  // 4. Our single-pass kernel on one job: evaluation + decoupled look-back + gather.
  const std::uint64_t tiles = upload_jobs(d, {n}, stream);
  s = median_device_seconds(runs, stream, [&] { launch_tiles(d, 1, tiles, stream); });
  expect_permutation_sum("shuffle_single", d.d_out, n, stream);
  report(o, "shuffle_single", n, sizeof(Word), runs, s);
}

// Production shapes: `sizes` jobs laid end to end, on each kernel.
void bench_shape(const Options& o, const std::string& shape, const std::vector<std::uint64_t>& sizes,
                 cudaStream_t stream) {
  std::uint64_t n = 0;
  std::uint64_t tiles_bound = 0;
  for (std::uint64_t m : sizes) n += m, tiles_bound += m / 2048 + 1;
  if (!Resident::fits(n, sizes.size())) return;
  Resident d(n, sizes.size(), tiles_bound, stream);
  const std::uint64_t tiles = upload_jobs(d, sizes, stream);
  const int runs = o.quick ? 3 : 9;
  const std::string extra = "shape=" + shape + " jobs=" + std::to_string(sizes.size()) +
                            " job_records=" + std::to_string(sizes.front());
  double s = median_device_seconds(runs, stream, [&] { launch_tiles(d, sizes.size(), tiles, stream); });
  expect_permutation_sum("shape tiles", d.d_out, n, stream);
  report(o, "shape_tiles", n, sizeof(Word), runs, s, extra);
  if (sizes.front() <= (std::uint64_t{1} << 32)) {
    s = median_device_seconds(runs, stream, [&] { launch_batch(d, sizes.size(), stream); });
    expect_permutation_sum("shape batch", d.d_out, n, stream);
    report(o, "shape_batch", n, sizeof(Word), runs, s, extra);
  }
}

}  // namespace

void bench_kernels(const Options& o) {
  cudaStream_t stream = nullptr;
  BENCH_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  for (int log2 = 16; log2 <= (o.quick ? 20 : 30); ++log2) {
    bench_size(o, std::uint64_t{1} << log2, stream);
    bench_size(o, (std::uint64_t{1} << log2) + 1, stream);
  }
  BENCH_CUDA(cudaStreamDestroy(stream));
}

void bench_production_shapes(const Options& o) {
  cudaStream_t stream = nullptr;
  BENCH_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  for (std::size_t jobs : o.quick ? std::vector<std::size_t>{1, 16} : std::vector<std::size_t>{1, 4, 16, 64, 256, 1024}) {
    bench_shape(o, "chunks", std::vector<std::uint64_t>(jobs, kLeafRecords), stream);
    bench_shape(o, "leaves", std::vector<std::uint64_t>(jobs, 3 * kLeafRecords / 4), stream);
  }
  // The tail job: the short last chunk of a node, alone, at sizes on both
  // sides of KernelChoice::batch_max_domain.
  for (std::uint64_t m : {std::uint64_t{1000}, std::uint64_t{1} << 16, (std::uint64_t{1} << 17) + 1,
                          std::uint64_t{3} << 18}) {
    bench_shape(o, "tail", {m}, stream);
  }
  // Many small jobs (the chi-square test's shape and a deep plan's leaves).
  bench_shape(o, "small", std::vector<std::uint64_t>(o.quick ? 1000 : 100000, 5), stream);
  BENCH_CUDA(cudaStreamDestroy(stream));
}

}  // namespace extshuffle::bench::cuda

int main(int argc, char** argv) {
  namespace b = extshuffle::bench::cuda;
  b::Options o;
  std::string section = "all";
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      o.quick = true;
    } else if (std::strcmp(argv[i], "--section") == 0 && i + 1 < argc) {
      section = argv[++i];
    } else {
      std::fprintf(stderr, "usage: cuda_shuffle_bench [--quick] [--section all|kernels|shapes|pcie|pipeline|node]\n");
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
  o.device_name = props.name;
  std::fprintf(stderr, "# device %s, %d multiprocessors, %llu bytes of memory\n", props.name,
               props.multiProcessorCount, static_cast<unsigned long long>(props.totalGlobalMem));
  const std::pair<const char*, void (*)(const b::Options&)> sections[] = {
      {"kernels", b::bench_kernels}, {"shapes", b::bench_production_shapes}, {"pcie", b::bench_pcie},
      {"pipeline", b::bench_pipeline}, {"node", b::bench_node}};
  bool ran = false;
  for (const auto& [name, run] : sections) {
    if (section != "all" && section != name) continue;
    run(o);
    ran = true;
  }
  if (!ran) {
    std::fprintf(stderr, "cuda_shuffle_bench: unknown section '%s'\n", section.c_str());
    return 2;
  }
  return 0;
}
