// The CUDA kernels' bijection helpers (src/device/cuda/bijection_params.hpp,
// the source nvcc compiles into the kernels), compiled by the host compiler
// and run on the CPU, against core's VariablePhilox (the one definition).
// Needs neither nvcc nor a GPU, so every build catches drift between the
// kernels' helpers and core: every index of every width up to 2^18 and
// samples at every width up to 62 (philox_cases.hpp), for the permutation's
// 24 rounds under four seeds and for 0, 1, 7 and 32 rounds. The kernels
// themselves run on a device in the gpu-labelled tests.
// Deterministic comparisons: false-failure rate 0.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "device/cuda/bijection_params.hpp"
#include "device/philox_cases.hpp"

namespace extshuffle::device::cuda::kernels::cuda_kernel_host_test {
namespace {

// The parameters a kernel receives hold core's keys, halves and rounds.
TEST(CudaKernelHost, BijectionParamsCarryCoresBijection) {
  for (std::uint32_t bits = 1; bits <= core::kMaxDomainBits; ++bits) {
    for (int rounds : {0, 1, core::kVariablePhiloxRounds, core::kVariablePhiloxMaxRounds}) {
      const core::VariablePhilox f(bits, core::Stream(bits, core::StreamAddress{}), rounds);
      const BijectionParams p = make_bijection_params(f);
      ASSERT_EQ(p.rounds, f.rounds());
      for (int r = 0; r < rounds; ++r) ASSERT_EQ(p.keys[r], f.key(r)) << "round " << r;
      ASSERT_EQ(p.halves.left_bits, f.left_bits());
      ASSERT_EQ(p.halves.right_bits, f.right_bits());
      ASSERT_EQ(p.halves.left_mask, f.left_mask());
      ASSERT_EQ(p.halves.right_mask, f.right_mask());
      ASSERT_EQ(domain_size(p), f.domain_size()) << "width " << bits;
    }
  }
}

// evaluate_bijection<kItemsPerThread> (what stage_tile calls) and a one-item
// instance give f(first + j) for every index inside the domain. Items past
// the domain's end are computed by the kernel too but discarded there, so
// they are not compared.
TEST(CudaKernelHost, EvaluateBijectionMatchesCore) {
  std::uint64_t runs = 0;
  testing::for_each_philox_run(kItemsPerThread, [&](const core::VariablePhilox& f,
                                                    std::uint64_t first, std::uint32_t count) {
    if (::testing::Test::HasFatalFailure()) return;
    const BijectionParams p = make_bijection_params(f);
    std::uint64_t values[kItemsPerThread];
    evaluate_bijection<kItemsPerThread>(p, first, values);
    for (std::uint32_t j = 0; j < count; ++j) {
      ASSERT_EQ(values[j], f(first + j)) << "width " << f.domain_bits() << ", " << f.rounds()
                                         << " rounds, index " << first + j;
    }
    std::uint64_t single[1];
    evaluate_bijection<1>(p, first, single);
    ASSERT_EQ(single[0], f(first)) << "width " << f.domain_bits() << ", index " << first;
    ++runs;
  });
  EXPECT_GT(runs, 0u);
}

// The single-pass kernel launches one block per tile: every index of the
// domain is in exactly one tile.
TEST(CudaKernelHost, TilesCoverTheDomain) {
  for (std::uint32_t bits = 0; bits <= core::kMaxDomainBits; ++bits) {
    const std::uint64_t domain = std::uint64_t{1} << bits;
    const std::uint64_t tiles = tiles_for_domain(domain);
    ASSERT_GE(tiles * kTileItems, domain) << "width " << bits;
    ASSERT_LT((tiles - 1) * kTileItems, domain) << "width " << bits;
  }
}

// The single-pass kernel finds each tile's job by binary search over the
// jobs' first tiles: the same job as a linear scan, for every tile of job
// lists with one job, equal jobs (a node's chunks), one-tile jobs and
// mixed sizes.
TEST(CudaKernelHost, EveryTileFindsItsJob) {
  const std::vector<std::vector<std::uint64_t>> job_tiles = {
      {1}, {256}, {1, 1, 1, 1, 1}, std::vector<std::uint64_t>(1000, 256), {3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5}};
  for (const auto& tiles_of_job : job_tiles) {
    std::vector<std::uint64_t> first_tiles{0};
    for (std::uint64_t t : tiles_of_job) first_tiles.push_back(first_tiles.back() + t);
    const auto jobs = static_cast<std::uint32_t>(tiles_of_job.size());
    std::uint32_t expected = 0;
    for (std::uint64_t tile = 0; tile < first_tiles.back(); ++tile) {
      while (first_tiles[expected + 1] <= tile) ++expected;
      ASSERT_EQ(job_of_tile(first_tiles.data(), jobs, tile), expected) << "tile " << tile << " of " << jobs << " jobs";
    }
  }
}

}  // namespace
}  // namespace extshuffle::device::cuda::kernels::cuda_kernel_host_test
