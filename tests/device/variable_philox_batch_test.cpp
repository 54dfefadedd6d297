// The SIMD CPU kernels restate VariablePhilox's round in Highway's lane
// operations (they must: core's scalar round does not vectorise to the
// 32x32->64 multiplies). This test holds them to core's operator(), the one
// definition: every index of every width up to 2^18 and samples at every
// width up to 62 (the cases of philox_cases.hpp: odd and even widths, round
// counts 0 to 32, batch lengths that end mid-vector), for each Highway target
// this CPU runs (forced in turn with hwy::SetSupportedTargetsForTest), and
// for the target chosen at run time. Deterministic comparisons: false-failure
// rate 0.
#include "device/cpu/variable_philox_batch.hpp"

#include <gtest/gtest.h>
#include <hwy/targets.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "device/philox_cases.hpp"

namespace extshuffle::device::cpu::variable_philox_batch_test {
namespace {

// Compares the batch entry point with core on every case; stops at the
// first mismatch.
void expect_matches_core(const char* target) {
  std::uint64_t runs = 0;
  testing::for_each_philox_run(kPhiloxBatch, [&](const core::VariablePhilox& f, std::uint64_t first,
                                                 std::uint32_t count) {
    if (::testing::Test::HasFatalFailure()) return;
    std::uint64_t values[kPhiloxBatch];
    evaluate_variable_philox(f, first, count, values);
    for (std::uint32_t j = 0; j < count; ++j) {
      ASSERT_EQ(values[j], f(first + j)) << target << ", width " << f.domain_bits() << ", " << f.rounds()
                                         << " rounds, index " << first + j << " (run of " << count
                                         << " from " << first << ")";
    }
    ++runs;
  });
  EXPECT_GT(runs, 0u);
}

// Every target compiled in that this CPU runs; on x86-64 at least the
// portable EMU128 and, on any CPU of the last decade, SSE4 and AVX2.
TEST(VariablePhiloxBatch, EveryTargetMatchesCore) {
  const std::vector<std::int64_t> targets = philox_targets();
  ASSERT_FALSE(targets.empty());
  for (std::int64_t target : targets) {
    SCOPED_TRACE(philox_target_name(target));
    hwy::SetSupportedTargetsForTest(target);
    expect_matches_core(philox_target_name(target));
    if (HasFatalFailure()) break;
  }
  hwy::SetSupportedTargetsForTest(0);
  std::string names;
  for (std::int64_t target : targets) names += std::string(" ") + philox_target_name(target);
  RecordProperty("targets", names);
  std::printf("checked targets:%s\n", names.c_str());
}

// The entry point the shuffle uses (the best target, or EXTSHUFFLE_CPU_KERNEL).
TEST(VariablePhiloxBatch, RunTimeChoiceMatchesCore) { expect_matches_core("run-time choice"); }

}  // namespace
}  // namespace extshuffle::device::cpu::variable_philox_batch_test
