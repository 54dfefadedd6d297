// The CUDA back end against the CPU back end (docs/conventions.md, The bijective shuffle, Tests): byte-identical
// output for single jobs and batches over many sizes and record sizes, the
// output is a permutation, and all 120 orders of 5 records are equally likely
// on the GPU path. Plain C++ on the public interface; every test skips (with
// the reason) where cuda_available() is false, so the suite passes without a GPU.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "device/staging.hpp"
#include "extshuffle/device/device_error.hpp"
#include "extshuffle/device/shuffle_records.hpp"
#include "support/permutations.hpp"
#include "support/statistics.hpp"

namespace extshuffle::device::cuda_shuffle_test {
namespace {

using core::NodeId;
using core::Purpose;
using core::StreamAddress;

#define EXTSHUFFLE_SKIP_WITHOUT_CUDA() \
  if (!cuda_available()) GTEST_SKIP() << "no usable CUDA device: " << cuda_unavailable_reason()

core::VariablePhilox bijection(std::uint64_t seed, std::uint64_t index, std::uint64_t n) {
  return core::shuffle_bijection(seed, StreamAddress{NodeId{3, 0}, Purpose::kLab, index}, n);
}

// Shuffles numbered records on `device`.
std::vector<std::byte> shuffled(Device device, const std::vector<std::byte>& input,
                                std::uint64_t n, std::size_t record_size, std::uint64_t seed) {
  std::vector<std::byte> output(input.size());
  const ShuffleJob job{input.data(), output.data(), n, bijection(seed, n, n)};
  shuffle_records(device, job, record_size);
  return output;
}

// Returns the index of the first differing record, or -1.
std::int64_t first_difference(const std::vector<std::byte>& a, const std::vector<std::byte>& b,
                              std::size_t record_size) {
  if (a.size() != b.size()) return 0;
  if (std::memcmp(a.data(), b.data(), a.size()) == 0) return -1;
  for (std::size_t k = 0; k * record_size < a.size(); ++k) {
    if (std::memcmp(a.data() + k * record_size, b.data() + k * record_size, record_size) != 0) {
      return static_cast<std::int64_t>(k);
    }
  }
  return -1;
}

void expect_same_as_cpu(std::uint64_t n, std::size_t record_size, std::uint64_t seed) {
  const auto input = testing::numbered_records(n, record_size);
  const auto cpu = shuffled(Device::kCpu, input, n, record_size, seed);
  const auto gpu = shuffled(Device::kCuda, input, n, record_size, seed);
  EXPECT_EQ(first_difference(cpu, gpu, record_size), -1)
      << "n = " << n << ", record size " << record_size;
}

std::vector<std::uint64_t> interesting_sizes(int max_log2) {
  std::vector<std::uint64_t> sizes = {0, 1, 2, 3, 5, 15, 16, 17, 100, 1000};
  for (int k = 5; k <= max_log2; ++k) {
    sizes.push_back(std::uint64_t{1} << k);
    sizes.push_back((std::uint64_t{1} << k) + 1);
  }
  sizes.push_back((std::uint64_t{1} << max_log2) - 1);
  return sizes;
}

// 8-byte records from 0 to 2^24 + 1: tiles of one block (n <= 4096), the
// batched kernel (single job with a domain up to 2^17), and the look-back
// kernel across many tiles (2^24 + 1 needs a 2^25 domain, 8192 tiles).
TEST(CudaShuffle, EightByteRecordsMatchCpu) {
  EXTSHUFFLE_SKIP_WITHOUT_CUDA();
  for (std::uint64_t n : interesting_sizes(24)) expect_same_as_cpu(n, 8, 41);
}

// The vector paths (1, 2, 4, 16 bytes) and the generic path: per-thread word
// copies (12, 20, 24), per-thread byte copies (3), per-warp byte, word and
// 16-byte copies (33, 100, 48).
TEST(CudaShuffle, OtherRecordSizesMatchCpu) {
  EXTSHUFFLE_SKIP_WITHOUT_CUDA();
  for (std::size_t record_size : {1, 2, 3, 4, 12, 16, 20, 24, 33, 48, 100}) {
    const int max_log2 = record_size <= 16 ? 20 : 17;
    for (std::uint64_t n : interesting_sizes(max_log2)) expect_same_as_cpu(n, record_size, 43);
  }
}

TEST(CudaShuffle, LargeRecordsMatchCpu) {
  EXTSHUFFLE_SKIP_WITHOUT_CUDA();
  for (std::uint64_t n : {0ull, 1ull, 2ull, 3ull, 16ull, 17ull, 1000ull, 4096ull, 4097ull, 20000ull}) {
    expect_same_as_cpu(n, 4096, 47);
  }
}

// The GPU output is itself a permutation, whole records moved.
TEST(CudaShuffle, OutputIsAPermutation) {
  EXTSHUFFLE_SKIP_WITHOUT_CUDA();
  for (std::uint64_t n : {1ull, 2ull, 17ull, 4097ull, (1ull << 17) + 1, (1ull << 20) + 1}) {
    for (std::size_t record_size : {8ul, 12ul, 16ul}) {
      const auto input = testing::numbered_records(n, record_size);
      const auto out = shuffled(Device::kCuda, input, n, record_size, 53);
      const auto indices = testing::record_indices(out, record_size);
      ASSERT_TRUE(testing::is_permutation_of_iota(indices)) << n << " x " << record_size;
      for (std::uint64_t k = 0; k < n; ++k) {
        ASSERT_EQ(0, std::memcmp(out.data() + k * record_size,
                                 input.data() + indices[k] * record_size, record_size))
            << n << " x " << record_size << ", record " << k;
      }
    }
  }
}

// A batch of many jobs with their own keys, sizes on both sides of the
// batched/look-back split (domains up to and beyond 2^17), empty jobs among
// them, some jobs adjacent in one host buffer and some in buffers of their own:
// the same bytes as the CPU back end and as the jobs run one at a time.
void expect_batches_match_cpu_and_single_jobs() {
  for (std::size_t record_size : {8ul, 12ul, 16ul}) {
    std::vector<std::uint64_t> sizes;
    for (std::uint64_t k = 0; k < 300; ++k) sizes.push_back((k * 7919) % 5000);
    for (std::uint64_t n : {0ull, 1ull, 65536ull, 65537ull, 131072ull, 131073ull, 300000ull}) {
      sizes.push_back(n);
    }
    // Jobs 0..149 share one host buffer (adjacent); the rest have their own.
    std::uint64_t shared_records = 0;
    for (std::size_t k = 0; k < 150; ++k) shared_records += sizes[k];
    const auto shared_input = testing::numbered_records(shared_records, record_size);
    std::vector<std::byte> shared_cpu(shared_input.size()), shared_gpu(shared_input.size());
    std::vector<std::vector<std::byte>> inputs, cpu_out, gpu_out;
    std::vector<ShuffleJob> cpu_jobs, gpu_jobs;
    std::uint64_t offset = 0;
    for (std::size_t k = 0; k < sizes.size(); ++k) {
      const std::uint64_t n = sizes[k];
      const auto f = bijection(59, k, n);
      if (k < 150) {
        const std::size_t at = offset * record_size;
        cpu_jobs.push_back({shared_input.data() + at, shared_cpu.data() + at, n, f});
        gpu_jobs.push_back({shared_input.data() + at, shared_gpu.data() + at, n, f});
        offset += n;
      } else {
        inputs.push_back(testing::numbered_records(n, record_size));
        cpu_out.emplace_back(inputs.back().size());
        gpu_out.emplace_back(inputs.back().size());
      }
    }
    for (std::size_t k = 150; k < sizes.size(); ++k) {
      const std::size_t m = k - 150;
      const auto f = bijection(59, k, sizes[k]);
      cpu_jobs.push_back({inputs[m].data(), cpu_out[m].data(), sizes[k], f});
      gpu_jobs.push_back({inputs[m].data(), gpu_out[m].data(), sizes[k], f});
    }
    shuffle_records(Device::kCpu, cpu_jobs, record_size);
    shuffle_records(Device::kCuda, gpu_jobs, record_size);
    EXPECT_EQ(first_difference(shared_cpu, shared_gpu, record_size), -1) << record_size;
    for (std::size_t m = 0; m < inputs.size(); ++m) {
      EXPECT_EQ(first_difference(cpu_out[m], gpu_out[m], record_size), -1)
          << "job " << 150 + m << " of " << sizes[150 + m] << " records x " << record_size;
    }
    // The grouping of jobs into calls does not matter.
    for (std::size_t m = 0; m < inputs.size(); ++m) {
      std::vector<std::byte> alone(inputs[m].size());
      ShuffleJob job = gpu_jobs[150 + m];
      job.output = alone.data();
      shuffle_records(Device::kCuda, job, record_size);
      EXPECT_EQ(first_difference(alone, gpu_out[m], record_size), -1) << "job " << 150 + m;
    }
  }
}

TEST(CudaShuffle, BatchesMatchCpuAndSingleJobs) {
  EXTSHUFFLE_SKIP_WITHOUT_CUDA();
  expect_batches_match_cpu_and_single_jobs();
}

// The same through a tiny staging: many units in flight one after another,
// every copy wrapping the pinned ring, many launches per unit.
TEST(CudaShuffle, TinyStagingMatchesCpu) {
  EXTSHUFFLE_SKIP_WITHOUT_CUDA();
  testing::with_staging(testing::tiny_staging(), [] {
    expect_batches_match_cpu_and_single_jobs();
    for (std::uint64_t n : {1ull, 4097ull, 100000ull}) expect_same_as_cpu(n, 8, 71);
    expect_same_as_cpu(300, 4096, 73);  // records larger than a slot
  });
}

TEST(CudaShuffle, EmptyCallsDoNothing) {
  EXTSHUFFLE_SKIP_WITHOUT_CUDA();
  EXPECT_NO_THROW(shuffle_records(Device::kCuda, std::span<const ShuffleJob>(), 8));
  const ShuffleJob empty{nullptr, nullptr, 0, bijection(1, 0, 0)};
  EXPECT_NO_THROW(shuffle_records(Device::kCuda, empty, 8));
  EXPECT_TRUE(cuda_unavailable_reason().empty());
}

// Chi-square over all 120 orders of 5 records, 240000 shuffles (2000 per
// order) run on the GPU in 10 batches of 24000 jobs, each with its own key.
// Threshold p < 1e-6: false-failure rate 1e-6 per run. (A different seed
// from the CPU test, so the two are independent samples.)
TEST(CudaShuffle, AllOrdersOfFiveAreEquallyLikely) {
  EXTSHUFFLE_SKIP_WITHOUT_CUDA();
  constexpr std::uint64_t kShuffles = 240000;
  constexpr std::uint64_t kBatch = 24000;
  constexpr std::uint64_t kRecords = 5;
  std::vector<std::uint64_t> counts(120, 0);
  const auto one = testing::numbered_records(kRecords, 8);
  std::vector<std::byte> input;
  for (std::uint64_t b = 0; b < kBatch; ++b) input.insert(input.end(), one.begin(), one.end());
  std::vector<std::byte> output(input.size());
  for (std::uint64_t first = 0; first < kShuffles; first += kBatch) {
    std::vector<ShuffleJob> jobs;
    for (std::uint64_t b = 0; b < kBatch; ++b) {
      jobs.push_back({input.data() + b * kRecords * 8, output.data() + b * kRecords * 8, kRecords,
                      core::shuffle_bijection(7, StreamAddress{NodeId{0, 0}, Purpose::kLab, first + b},
                                              kRecords)});
    }
    shuffle_records(Device::kCuda, jobs, 8);
    for (std::uint64_t b = 0; b < kBatch; ++b) {
      const auto order = testing::record_indices(
          std::span<const std::byte>(output.data() + b * kRecords * 8, kRecords * 8), 8);
      ++counts[testing::permutation_rank(order)];
    }
  }
  const double stat = testing::chi_square_statistic(counts, std::vector<double>(120, 1.0 / 120));
  EXPECT_GT(testing::chi_square_p_value(stat, 119), 1e-6) << "chi-square " << stat;
}

// More than 2^32 one-byte records (a 2^33 domain, 2^21 tiles, 64-bit output
// offsets). Needs about 13 GiB of host memory and 8.6 GiB of device memory:
// skipped where either is short.
TEST(CudaShuffle, MoreThanTwoToThe32Records) {
  EXTSHUFFLE_SKIP_WITHOUT_CUDA();
  const std::uint64_t n = (std::uint64_t{1} << 32) + 1;
  const std::uint64_t host_bytes = static_cast<std::uint64_t>(sysconf(_SC_AVPHYS_PAGES)) *
                                   static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
  if (host_bytes < 3 * n + (std::uint64_t{2} << 30)) {
    GTEST_SKIP() << "needs " << 3 * n << " bytes of free host memory, " << host_bytes << " free";
  }
  std::vector<std::byte> input(n);
  for (std::uint64_t i = 0; i < n; ++i) input[i] = static_cast<std::byte>((i * 2654435761u) >> 13);
  const auto f = bijection(61, 0, n);
  std::vector<std::byte> gpu(n);
  const ShuffleJob gpu_job{input.data(), gpu.data(), n, f};
  try {
    shuffle_records(Device::kCuda, gpu_job, 1);
  } catch (const DeviceError& e) {
    if (std::string(e.what()).find("bytes of device memory") != std::string::npos) {
      GTEST_SKIP() << e.what();
    }
    throw;
  }
  std::vector<std::byte> cpu(n);
  const ShuffleJob cpu_job{input.data(), cpu.data(), n, f};
  shuffle_records(Device::kCpu, cpu_job, 1);
  EXPECT_EQ(first_difference(cpu, gpu, 1), -1);
}

}  // namespace
}  // namespace extshuffle::device::cuda_shuffle_test
