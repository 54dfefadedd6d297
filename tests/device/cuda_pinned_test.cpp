// shuffle_records on the GPU with the caller's buffers in pinned memory
// (cudaHostAlloc), which the back end moves by DMA directly, alone and
// mixed with pageable buffers: the same bytes as the CPU back end. Skips
// where no GPU is usable. Deterministic comparisons: false-failure rate 0.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <cstring>
#include <vector>

#include "extshuffle/device/shuffle_records.hpp"
#include "support/permutations.hpp"

namespace extshuffle::device::cuda_pinned_test {
namespace {

class Pinned {
 public:
  explicit Pinned(std::size_t bytes) : bytes_(bytes) {
    void* memory = nullptr;
    EXPECT_EQ(cudaHostAlloc(&memory, bytes == 0 ? 1 : bytes, cudaHostAllocDefault), cudaSuccess);
    data_ = static_cast<std::byte*>(memory);
  }
  ~Pinned() { cudaFreeHost(data_); }
  Pinned(const Pinned&) = delete;
  Pinned& operator=(const Pinned&) = delete;
  std::byte* data() const { return data_; }

 private:
  std::byte* data_ = nullptr;
  std::size_t bytes_;
};

core::VariablePhilox bijection(std::uint64_t index, std::uint64_t n) {
  return core::shuffle_bijection(31, core::StreamAddress{core::NodeId{1, 0}, core::Purpose::kLab, index}, n);
}

TEST(CudaPinned, PinnedAndPageableBuffersMatchCpu) {
  if (!cuda_available()) GTEST_SKIP() << "no usable CUDA device: " << cuda_unavailable_reason();
  constexpr std::size_t r = 8;
  // Chunks of one pinned input, a pinned output and a pageable one, sizes
  // below and above the direct-DMA threshold and the staging slot.
  const std::vector<std::uint64_t> sizes = {1, 1000, 8191, 8193, 1 << 20, (1 << 21) + 3, 77};
  std::uint64_t total = 0;
  for (std::uint64_t n : sizes) total += n;
  const auto numbered = testing::numbered_records(total, r);
  Pinned input(numbered.size());
  std::memcpy(input.data(), numbered.data(), numbered.size());
  Pinned gpu_pinned(numbered.size());
  std::vector<std::byte> gpu_pageable(numbered.size()), cpu(numbered.size());
  std::vector<ShuffleJob> pinned_jobs, pageable_jobs, cpu_jobs;
  std::uint64_t at = 0;
  for (std::size_t k = 0; k < sizes.size(); ++k) {
    const std::uint64_t n = sizes[k];
    const auto f = bijection(k, n);
    pinned_jobs.push_back({input.data() + at * r, gpu_pinned.data() + at * r, n, f});
    pageable_jobs.push_back({numbered.data() + at * r, gpu_pageable.data() + at * r, n, f});
    cpu_jobs.push_back({numbered.data() + at * r, cpu.data() + at * r, n, f});
    at += n;
  }
  shuffle_records(Device::kCpu, cpu_jobs, r);
  shuffle_records(Device::kCuda, pinned_jobs, r);
  shuffle_records(Device::kCuda, pageable_jobs, r);
  EXPECT_EQ(std::memcmp(gpu_pinned.data(), cpu.data(), cpu.size()), 0);
  EXPECT_TRUE(gpu_pageable == cpu);
  // Pinned input, pageable output.
  std::vector<std::byte> mixed(numbered.size());
  for (std::size_t k = 0; k < sizes.size(); ++k) pinned_jobs[k].output = mixed.data() + (pageable_jobs[k].output - gpu_pageable.data());
  shuffle_records(Device::kCuda, pinned_jobs, r);
  EXPECT_TRUE(mixed == cpu);
}

}  // namespace
}  // namespace extshuffle::device::cuda_pinned_test
