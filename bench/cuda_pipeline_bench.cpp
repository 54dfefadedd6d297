// Host-to-host parts of cuda_shuffle_bench: the pinned PCIe bandwidth (the
// ceiling of the pipeline goal: host to host >= 80% of one direction), the
// public shuffle_records call on production-shaped batches (2^20-record
// chunks of 8-byte records) with pinned and pageable buffers while the
// staging (slot and unit sizes) is swept, and whole nodes on the device
// against the CPU's in-RAM node. Outputs are checked (sums of shuffled iota,
// and the node against the CPU byte for byte) so that nothing broken reports
// a speed.
#include <cstring>
#include <memory>
#include <vector>

#include "cuda_bench_support.hpp"
#include "device/cuda_backend.hpp"
#include "extshuffle/ioperm/reference_shuffle.hpp"
#include "extshuffle/device/node_on_device.hpp"
#include "extshuffle/device/shuffle_records.hpp"

namespace extshuffle::bench::cuda {
namespace {

namespace dev = extshuffle::device;
using Word = std::uint64_t;
constexpr std::uint64_t kChunkRecords = std::uint64_t{1} << 20;

struct PinnedHost {
  explicit PinnedHost(std::size_t bytes) { BENCH_CUDA(cudaMallocHost(&data, bytes)); }
  ~PinnedHost() { cudaFreeHost(data); }
  void* data = nullptr;
};

void fill_iota(Word* data, std::uint64_t n) {
  for (std::uint64_t i = 0; i < n; ++i) data[i] = i;
}

void expect_iota_sum(const char* what, const Word* data, std::uint64_t n) {
  Word sum = 0;
  for (std::uint64_t i = 0; i < n; ++i) sum += data[i];
  if (sum != iota_sum(n)) {
    std::fprintf(stderr, "cuda_shuffle_bench: %s on %llu records: output is not a permutation\n", what,
                 static_cast<unsigned long long>(n));
    std::exit(1);
  }
}

std::string mib(std::uint64_t bytes) { return std::to_string(bytes >> 20) + "MiB"; }

}  // namespace

void bench_pcie(const Options& o) {
  const std::uint64_t bytes = std::uint64_t{1} << (o.quick ? 28 : 30);
  const int runs = o.quick ? 3 : 7;
  PinnedHost h_a(bytes), h_b(bytes);
  std::memset(h_a.data, 1, bytes);
  void* d_a = nullptr;
  void* d_b = nullptr;
  BENCH_CUDA(cudaMalloc(&d_a, bytes));
  BENCH_CUDA(cudaMalloc(&d_b, bytes));
  cudaStream_t s1, s2;
  BENCH_CUDA(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
  BENCH_CUDA(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
  const std::uint64_t words = bytes / sizeof(Word);
  auto line = [&](const char* what, double seconds, double moved) {
    report(o, what, words, sizeof(Word), runs, seconds, "bytes_per_s=" + std::to_string(moved / seconds));
  };
  line("pcie_h2d_pinned", median_host_seconds(runs, [&] {
         BENCH_CUDA(cudaMemcpyAsync(d_a, h_a.data, bytes, cudaMemcpyHostToDevice, s1));
         BENCH_CUDA(cudaStreamSynchronize(s1));
       }), static_cast<double>(bytes));
  line("pcie_d2h_pinned", median_host_seconds(runs, [&] {
         BENCH_CUDA(cudaMemcpyAsync(h_b.data, d_a, bytes, cudaMemcpyDeviceToHost, s1));
         BENCH_CUDA(cudaStreamSynchronize(s1));
       }), static_cast<double>(bytes));
  // Both directions at once: bytes_per_s counts one direction's bytes.
  line("pcie_bidirectional_pinned", median_host_seconds(runs, [&] {
         BENCH_CUDA(cudaMemcpyAsync(d_b, h_a.data, bytes, cudaMemcpyHostToDevice, s1));
         BENCH_CUDA(cudaMemcpyAsync(h_b.data, d_a, bytes, cudaMemcpyDeviceToHost, s2));
         BENCH_CUDA(cudaStreamSynchronize(s1));
         BENCH_CUDA(cudaStreamSynchronize(s2));
       }), static_cast<double>(bytes));
  BENCH_CUDA(cudaStreamDestroy(s1));
  BENCH_CUDA(cudaStreamDestroy(s2));
  BENCH_CUDA(cudaFree(d_a));
  BENCH_CUDA(cudaFree(d_b));
}

void bench_pipeline(const Options& o) {
  const std::uint64_t n = std::uint64_t{1} << (o.quick ? 24 : 28);  // 2 GiB of 8-byte records in full runs
  const int runs = o.quick ? 2 : 5;
  const std::uint64_t bytes = n * sizeof(Word);
  PinnedHost pinned_in(bytes), pinned_out(bytes);
  std::vector<Word> pageable_in(n), pageable_out(n);
  fill_iota(static_cast<Word*>(pinned_in.data), n);
  fill_iota(pageable_in.data(), n);
  // Production shape: the node's 2^20-record chunks, each its own job.
  auto jobs_for = [&](const void* in, void* out) {
    std::vector<dev::ShuffleJob> jobs;
    for (std::uint64_t first = 0; first < n; first += kChunkRecords) {
      const std::uint64_t m = std::min(kChunkRecords, n - first);
      jobs.push_back({static_cast<const std::byte*>(in) + first * sizeof(Word),
                      static_cast<std::byte*>(out) + first * sizeof(Word), m,
                      core::shuffle_bijection(7, {{0, 0}, core::Purpose::kChunkShuffle, first / kChunkRecords}, m)});
    }
    return jobs;
  };
  const auto pinned_jobs = jobs_for(pinned_in.data, pinned_out.data);
  const auto pageable_jobs = jobs_for(pageable_in.data(), pageable_out.data());
  const dev::cuda::StagingConfig defaults = dev::cuda::staging_config();
  std::vector<std::uint64_t> slot_sizes = {std::uint64_t{2} << 20, std::uint64_t{8} << 20, std::uint64_t{32} << 20};
  std::vector<std::uint64_t> unit_sizes = {std::uint64_t{16} << 20, std::uint64_t{64} << 20, std::uint64_t{256} << 20};
  if (o.quick) {
    slot_sizes = {defaults.slot_bytes};
    unit_sizes = {defaults.unit_bytes};
  }
  for (std::uint64_t slot : slot_sizes) {
    for (std::uint64_t unit : unit_sizes) {
      dev::cuda::StagingConfig config = defaults;
      config.slot_bytes = slot;
      config.unit_bytes = unit;
      dev::cuda::configure_staging(config);
      const std::string extra = "jobs=" + std::to_string(pinned_jobs.size()) + " slot=" + mib(slot) +
                                " slots=" + std::to_string(config.slots) + " unit=" + mib(unit);
      for (int pageable = 0; pageable < 2; ++pageable) {
        const auto& jobs = pageable ? pageable_jobs : pinned_jobs;
        const double s = median_host_seconds(runs, [&] { dev::shuffle_records(dev::Device::kCuda, jobs, sizeof(Word)); });
        expect_iota_sum("pipeline", pageable ? pageable_out.data() : static_cast<const Word*>(pinned_out.data), n);
        report(o, pageable ? "pipeline_pageable" : "pipeline_pinned", n, sizeof(Word), runs, s,
               extra + " bytes_per_s=" + std::to_string(static_cast<double>(bytes) / s));
      }
    }
  }
  dev::cuda::configure_staging(defaults);
  trim_default_pool();
}

void bench_node(const Options& o) {
  const int runs = o.quick ? 1 : 3;
  for (int log2 : o.quick ? std::vector<int>{22} : std::vector<int>{24, 26, 28, 30}) {
    const std::uint64_t n = std::uint64_t{1} << log2;
    if (!dev::node_fits_on_device(n, sizeof(Word))) {
      std::fprintf(stderr, "# skipping node of 2^%d records: does not fit on the device\n", log2);
      continue;
    }
    std::vector<Word> input(n), gpu(n), cpu;
    fill_iota(input.data(), n);
    const core::Node node{{0, 0}, n};
    const double gpu_s = median_host_seconds(runs, [&] {
      dev::shuffle_node_on_device(node, 5, core::kPlanV2, reinterpret_cast<const std::byte*>(input.data()),
                                  reinterpret_cast<std::byte*>(gpu.data()), sizeof(Word));
    });
    report(o, "node_gpu", n, sizeof(Word), runs, gpu_s, "levels=" + std::to_string(core::plan_levels(n, core::kPlanV2)));
    // The CPU's in-RAM node on all cores, the same bytes (checked).
    cpu.resize(n);
    const double cpu_s = median_host_seconds(runs, [&] {
      ioperm::shuffle_in_memory(std::span<const std::byte>(reinterpret_cast<const std::byte*>(input.data()), n * sizeof(Word)),
                                std::span<std::byte>(reinterpret_cast<std::byte*>(cpu.data()), n * sizeof(Word)),
                                sizeof(Word), 5, ioperm::ReferenceOptions{core::kPlanV2, dev::Device::kCpu, 0});
    });
    if (cpu != gpu) {
      std::fprintf(stderr, "cuda_shuffle_bench: node of %llu records: GPU and CPU differ\n",
                   static_cast<unsigned long long>(n));
      std::exit(1);
    }
    report(o, "node_cpu", n, sizeof(Word), runs, cpu_s, "threads=" + std::to_string(dev::resolve_threads(0)));
    trim_default_pool();
  }
}

}  // namespace extshuffle::bench::cuda
