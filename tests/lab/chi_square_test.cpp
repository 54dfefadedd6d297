// Chi-square over all orders (permlab/chi_square.hpp) and the inverse of
// VariablePhilox it can run on. Mitchell et al. Fig. 6 in small: at n = 5,
// 4 rounds fail and 24 rounds pass.
#include "chi_square.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "extshuffle/core/plan.hpp"
#include "extshuffle/core/variable_philox.hpp"
#include "generators.hpp"
#include "variable_philox_inverse.hpp"

namespace permlab::tests::chi_square_test {
namespace {

namespace core = extshuffle::core;

TEST(ChiSquare, CriticalValueMatchesTables) {
  EXPECT_NEAR(chi_square_critical_value(119, 0.01), 157.800, 1e-3);
  EXPECT_NEAR(chi_square_critical_value(1, 0.05), 3.841459, 1e-6);
}

// Exhaustive on small widths, sampled on larger ones, for several round counts.
TEST(ChiSquare, InverseUndoesVariablePhilox) {
  for (std::uint32_t bits = 2; bits <= 20; ++bits) {
    for (int rounds : {1, 7, 24, 32}) {
      const core::VariablePhilox f(bits, sample_stream(5, bits * 100 + rounds), rounds);
      const std::uint64_t step = bits <= 12 ? 1 : 977;
      for (std::uint64_t x = 0; x < f.domain_size(); x += step) {
        ASSERT_EQ(variable_philox_inverse(f, f(x)), x) << "bits " << bits << " rounds " << rounds;
      }
    }
  }
}

// The inverse route gives exactly the orders of the real shuffle_records path.
TEST(ChiSquare, InverseRouteEqualsTheBijectiveShuffle) {
  for (std::uint64_t n : {2, 5, 6, 17, 40}) {
    GeneratorOptions real, inverse;
    real.rounds = inverse.rounds = 9;
    inverse.domain_bits = core::domain_bits_for(n);
    auto a = make_generator(real, n), b = make_generator(inverse, n);
    std::vector<std::uint32_t> x(n), y(n);
    for (std::uint64_t s = 0; s < 200; ++s) {
      a->generate(s, x);
      b->generate(s, y);
      ASSERT_EQ(x, y) << "n " << n << " sample " << s;
    }
  }
}

// n = 5, 120000 samples (1000 per order), on the project's domain (2^8 since
// kMinDomainBits was raised; docs/quality.md). 24 rounds: p < 1e-4 fails, so
// the false-failure rate is 1e-4. 4 rounds: chi-square in the hundreds of
// thousands, certain failure. The same on the old 2^4 domain, where 4 rounds
// reach only 24 of the 120 orders.
TEST(ChiSquare, FourRoundsFailAndTwentyFourPassAtFiveRecords) {
  GeneratorOptions o;
  o.seed = 5;
  o.rounds = 24;
  const ChiSquareResult good = permlab::chi_square_test(o, 5, 120000, 2, 1e-4);
  EXPECT_TRUE(good.pass) << "chi2 " << good.statistic << " p " << good.p_value;
  EXPECT_EQ(good.orders_seen, 120u);
  o.rounds = 4;
  EXPECT_FALSE(permlab::chi_square_test(o, 5, 120000, 2, 1e-4).pass);
  o.domain_bits = 4;
  const ChiSquareResult old_domain = permlab::chi_square_test(o, 5, 120000, 2, 1e-4);
  EXPECT_FALSE(old_domain.pass);
  EXPECT_EQ(old_domain.orders_seen, 24u);
}

// The whole plan with 3 levels (5 -> (3, 2) -> (2, 1), L = 2, F = 2), 200
// samples per order, p < 1e-4 fails: false-failure rate 1e-4. The LCG fails
// the same test (certain: it reaches 30 of 120 orders).
TEST(ChiSquare, PlanWithThreeLevelsPassesAndLcgFails) {
  GeneratorOptions o;
  o.kind = "plan";
  o.leaf_records = 2;
  o.fanout = 2;
  o.seed = 6;
  ASSERT_EQ(core::plan_levels(5, core::PlanConstants{2, 2}), 3u);
  const ChiSquareResult plan = permlab::chi_square_test(o, 5, 24000, 2, 1e-4);
  EXPECT_TRUE(plan.pass) << "chi2 " << plan.statistic << " p " << plan.p_value;
  o.kind = "lcg";
  EXPECT_FALSE(permlab::chi_square_test(o, 5, 24000, 2, 1e-4).pass);
}

// The relative order of 4 records out of 200 through a 3-level plan
// (L = 16, F = 4: 200 -> 4 x 50 -> 4 x 13): records 0..3 (one chunk) and
// 0, 60, 120, 180 (four chunks). 10000 samples, p < 1e-4 fails each:
// false-failure rate 2e-4.
TEST(ChiSquare, PatternOfFourRecordsThroughTheWholePlanIsUniform) {
  GeneratorOptions o;
  o.kind = "plan";
  o.leaf_records = 16;
  o.fanout = 4;
  o.seed = 7;
  ASSERT_EQ(core::plan_levels(200, core::PlanConstants{16, 4}), 3u);
  for (std::uint64_t stride : {1, 60}) {
    const ChiSquareResult r = permlab::chi_square_test(o, 200, 10000, 2, 1e-4, 4, stride);
    EXPECT_TRUE(r.pass) << "stride " << stride << " chi2 " << r.statistic << " p " << r.p_value;
  }
}

TEST(ChiSquare, RejectsTestsItCannotDo) {
  GeneratorOptions o;
  EXPECT_THROW(permlab::chi_square_test(o, 7, 100000, 1, 0.01), std::invalid_argument);         // 7! cells
  EXPECT_THROW(permlab::chi_square_test(o, 5, 500, 1, 0.01), std::invalid_argument);            // < 5 per order
  EXPECT_THROW(permlab::chi_square_test(o, 10, 100000, 1, 0.01, 4, 4), std::invalid_argument);  // record 12 of 10
}

}  // namespace
}  // namespace permlab::tests::chi_square_test
