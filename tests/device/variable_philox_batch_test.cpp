// The SIMD CPU kernels restate VariablePhilox's round in vector intrinsics
// (they must: core's scalar round does not vectorise to vpmuludq/blend). This
// test holds them to core's operator(), the one definition: every index of
// every width up to 2^18 and samples at every width up to 62 (the cases of
// philox_cases.hpp), for each kernel this CPU can run; kernels it cannot run
// are skipped by name. Deterministic comparisons: false-failure rate 0.
#include "device/cpu/variable_philox_batch.hpp"

#include <gtest/gtest.h>

#include <cstdint>

#include "device/philox_cases.hpp"

namespace extshuffle::device::cpu {
namespace {

// Compares one kernel (or, with no kernel, the one chosen at run time) with
// core on every case; stops at the first mismatch.
void expect_matches_core(const PhiloxKernel* kernel) {
  std::uint64_t runs = 0;
  testing::for_each_philox_run(kPhiloxBatch, [&](const core::VariablePhilox& f, std::uint64_t first,
                                                 std::uint32_t count) {
    if (::testing::Test::HasFatalFailure()) return;
    std::uint64_t values[kPhiloxBatch];
    if (kernel != nullptr) {
      evaluate_variable_philox(f, first, count, values, *kernel);
    } else {
      evaluate_variable_philox(f, first, count, values);
    }
    for (std::uint32_t j = 0; j < count; ++j) {
      ASSERT_EQ(values[j], f(first + j)) << "width " << f.domain_bits() << ", " << f.rounds()
                                         << " rounds, index " << first + j << " (run of " << count
                                         << " from " << first << ")";
    }
    ++runs;
  });
  EXPECT_GT(runs, 0u);
}

void expect_kernel_matches_core(PhiloxKernel kernel, const char* name) {
  if (!kernel_supported(kernel)) GTEST_SKIP() << name << " is not supported by this CPU";
  expect_matches_core(&kernel);
}

TEST(VariablePhiloxBatch, PortableMatchesCore) {
  expect_kernel_matches_core(PhiloxKernel::kPortable, "portable");
}

TEST(VariablePhiloxBatch, Avx2MatchesCore) { expect_kernel_matches_core(PhiloxKernel::kAvx2, "AVX2"); }

TEST(VariablePhiloxBatch, Avx512MatchesCore) {
  expect_kernel_matches_core(PhiloxKernel::kAvx512, "AVX-512F");
}

// The entry point the shuffle uses (best kernel, or EXTSHUFFLE_CPU_KERNEL).
TEST(VariablePhiloxBatch, RunTimeChoiceMatchesCore) { expect_matches_core(nullptr); }

}  // namespace
}  // namespace extshuffle::device::cpu
