// Waechter's position matrix and bias B(M_n) as a test of the whole plan
// (permlab/position_matrix.hpp), and the bias's noise (labstats/statistics.hpp).
#include "position_matrix.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "extshuffle/core/plan.hpp"
#include "generators.hpp"
#include "labstats/statistics.hpp"

namespace permlab::tests::position_matrix_test {
namespace {

// E[B] and sd(B) under uniformity against a direct sum over the binomial for
// n = 2, S = 10 (each cell |X/10 - 1/2| with X ~ Binomial(10, 1/2)).
TEST(PositionMatrix, BiasNoiseMatchesTheBinomial) {
  double e1 = 0, e2 = 0, choose = 1;
  for (int k = 0; k <= 10; ++k) {
    if (k > 0) choose = choose * (10 - k + 1) / k;
    const double p = choose / 1024.0, d = std::fabs(k / 10.0 - 0.5);
    e1 += p * d;
    e2 += p * d * d;
  }
  const extshuffle::labstats::BiasNoise noise = extshuffle::labstats::bias_noise(2, 10);
  EXPECT_NEAR(noise.mean, 2 * e1, 1e-12);
  EXPECT_NEAR(noise.sd, std::sqrt(e2 - e1 * e1), 1e-12);
}

// The whole plan through 4 levels (n = 1000, L = 16, F = 4), 6000 samples.
// Chi-square of the matrix and of every row (pass: both at alpha/2 = 5e-5):
// false-failure rate 1e-4. B within 6 sd of its uniform expectation
// (one-sided, the sd is conservative): false-failure rate < 1e-9.
TEST(PositionMatrix, WholePlanIsWithinNoiseAtThousandRecords) {
  GeneratorOptions o;
  o.kind = "plan";
  o.leaf_records = 16;
  o.fanout = 4;
  o.seed = 8;
  ASSERT_EQ(extshuffle::core::plan_levels(1000, extshuffle::core::PlanConstants{16, 4}), 4u);
  const PositionResult r = position_test(o, 1000, 6000, 2, 1e-4);
  EXPECT_TRUE(r.pass) << "chi2 p " << r.p_value << " worst row p " << r.worst_row_p_value;
  EXPECT_LT(r.bias_z, 6.0) << "B " << r.bias << " uniform " << r.expected_bias << " +- " << r.bias_sd;
  EXPECT_NEAR(r.bias, r.expected_bias, 0.01 * r.expected_bias);
}

// Power: the same test at the same size rejects one pass of the omitted
// butterfly (Waechter 3.2; exact B ~ 0.4 at n = 1000) and the LCG bijection.
TEST(PositionMatrix, RejectsBiasedGenerators) {
  GeneratorOptions o;
  o.kind = "butterfly";
  o.variant = "omitted";
  const PositionResult butterfly = position_test(o, 1000, 6000, 2, 1e-4);
  EXPECT_FALSE(butterfly.pass);
  EXPECT_GT(butterfly.bias_z, 50);
  o.kind = "lcg";
  EXPECT_FALSE(position_test(o, 1000, 6000, 2, 1e-4).pass);
}

}  // namespace
}  // namespace permlab::tests::position_matrix_test
