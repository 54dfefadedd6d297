// Waechter et al.'s butterfly networks, exactly: the biased matrices of
// section 3.2, the unbiasedness for n = 2^m (3.1), convergence by iterating
// (4) and the effect of shifting (5). Deterministic (exact enumeration and
// propagation), except SampledNetworkMatchesExactMatrix.
#include "butterfly.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "generators.hpp"
#include "labstats/statistics.hpp"
#include "position_matrix.hpp"

namespace permlab::tests::butterfly_test {
namespace {

void expect_matrix(const SquareMatrix& m, const std::vector<std::vector<double>>& expected) {
  ASSERT_EQ(m.n, expected.size());
  for (std::size_t i = 0; i < m.n; ++i) {
    for (std::size_t j = 0; j < m.n; ++j) EXPECT_DOUBLE_EQ(m.at(i, j), expected[i][j]) << "row " << i << " col " << j;
  }
}

// Waechter 3.2: M_butterf.&pad.,3 ~ [.313 .313 .375; .375 .375 .250; .312 .312 .375],
// which by enumerating all 16 exchange patterns is exactly 5/16, 3/8, 1/4.
TEST(Butterfly, PaddedThreeIsWaechtersBiasedMatrix) {
  const double a = 5.0 / 16, b = 3.0 / 8, c = 1.0 / 4;
  expect_matrix(butterfly_position_matrix(3, ButterflyVariant::kPadded), {{a, a, b}, {b, b, c}, {a, a, b}});
}

// Waechter 3.2, n = 5 (4096 patterns): rows .191/.235, .203/.188, .211/.156
// are 49/256, 60/256, 52/256, 48/256, 54/256, 40/256.
TEST(Butterfly, PaddedFiveIsWaechtersBiasedMatrix) {
  const double a = 49.0 / 256, b = 60.0 / 256, c = 52.0 / 256, d = 48.0 / 256, e = 54.0 / 256, f = 40.0 / 256;
  expect_matrix(butterfly_position_matrix(5, ButterflyVariant::kPadded),
                {{a, a, a, a, b}, {c, c, c, c, d}, {e, e, e, e, f}, {c, c, c, c, d}, {a, a, a, a, b}});
}

// Waechter 3.2, Fig. 2: with omitted exchanges record 5 only moves in the
// last stage, to position 1 or 5.
TEST(Butterfly, OmittedFiveIsWaechtersMatrix) {
  const double e = 1.0 / 8, q = 1.0 / 4;
  expect_matrix(butterfly_position_matrix(5, ButterflyVariant::kOmitted),
                {{e, e, e, e, 0.5}, {q, q, q, q, 0}, {q, q, q, q, 0}, {q, q, q, q, 0}, {e, e, e, e, 0.5}});
}

// The row-averaging propagation used for large n equals brute force.
TEST(Butterfly, PropagationEqualsEnumerationForOmittedExchanges) {
  for (std::uint64_t n = 2; n <= 9; ++n) {
    const SquareMatrix p = butterfly_position_matrix(n, ButterflyVariant::kOmitted);
    const SquareMatrix e = butterfly_position_matrix_enumerated(n, ButterflyVariant::kOmitted);
    for (std::size_t k = 0; k < p.values.size(); ++k) ASSERT_DOUBLE_EQ(p.values[k], e.values[k]) << "n " << n;
  }
}

// Waechter 3.1: for n = 2^m both variants are the plain network: B = 0.
TEST(Butterfly, PowersOfTwoAreUnbiased) {
  for (std::uint64_t n : {2, 4, 8}) {
    EXPECT_EQ(bias(butterfly_position_matrix(n, ButterflyVariant::kPadded)), 0.0) << n;
    EXPECT_EQ(bias(butterfly_position_matrix(n, ButterflyVariant::kOmitted)), 0.0) << n;
  }
  EXPECT_EQ(bias(butterfly_position_matrix(256, ButterflyVariant::kOmitted)), 0.0);
}

// Waechter 4: iterating converges (M^2 is positive), strictly at every step
// for n = 3, 5; every matrix stays doubly stochastic.
TEST(Butterfly, IteratingReducesTheBias) {
  for (const auto variant : {ButterflyVariant::kPadded, ButterflyVariant::kOmitted}) {
    for (std::uint64_t n : {3, 5, 7}) {
      const SquareMatrix m = butterfly_position_matrix(n, variant);
      double previous = bias(m);
      EXPECT_GT(previous, 0.01) << n;
      for (int k = 2; k <= 6; ++k) {
        const SquareMatrix mk = iterate(m, k);
        const double b = bias(mk);
        EXPECT_LT(b, 0.5 * previous) << to_string(variant) << " n " << n << " k " << k;
        previous = b;
        for (std::size_t i = 0; i < n; ++i) {
          double row = 0, column = 0;
          for (std::size_t j = 0; j < n; ++j) {
            row += mk.at(i, j);
            column += mk.at(j, i);
          }
          EXPECT_NEAR(row, 1.0, 1e-12);
          EXPECT_NEAR(column, 1.0, 1e-12);
        }
      }
      EXPECT_LT(previous, 0.005) << to_string(variant) << " n " << n << " after 6 passes";  // omitted n = 5: 0.0036
    }
  }
}

// Waechter 5, Fig. 5 at a size cheap enough for a unit test: shifting can
// help or hurt; the best offset is never worse than no shift, and for n = 5
// (omitted) it beats it.
TEST(Butterfly, ShiftingChangesTheBias) {
  const SquareMatrix m = butterfly_position_matrix(5, ButterflyVariant::kOmitted);
  const double unshifted = bias(iterate(m, 3, 0));
  const std::uint64_t best = best_shift_offset(m, 3);
  EXPECT_LT(bias(iterate(m, 3, best)), unshifted);
  EXPECT_NE(best, 0u);
  // Shifting by l moves row p of M to row p + l.
  const SquareMatrix s = shift_rows(m, 2);
  for (std::size_t j = 0; j < 5; ++j) EXPECT_EQ(s.at(2, j), m.at(0, j));
}

// The sampled network (one Philox bit per exchange) has the exact matrix:
// chi-square of 10^5 samples of padded n = 5 against it (16 dof per the
// 5x5 cells, p < 1e-6 fails: false-failure rate 1e-6), and the sampled B is
// far from the uniform noise (a power check of the position test).
TEST(Butterfly, SampledNetworkMatchesExactMatrix) {
  constexpr std::uint64_t n = 5, samples = 100000;
  GeneratorOptions o;
  o.kind = "butterfly";
  o.variant = "padded";
  o.seed = 11;
  std::vector<std::uint64_t> counts;
  const PositionResult r = position_test(o, n, samples, 1, 0.01, &counts);
  const SquareMatrix exact = butterfly_position_matrix(n, ButterflyVariant::kPadded);
  double chi2 = 0;
  for (std::size_t k = 0; k < counts.size(); ++k) {
    const double expected = exact.values[k] * samples;
    chi2 += (counts[k] - expected) * (counts[k] - expected) / expected;
  }
  EXPECT_GT(extshuffle::labstats::chi_square_p_value(chi2, (n - 1) * (n - 1)), 1e-6) << chi2;
  EXPECT_FALSE(r.pass);
  EXPECT_GT(r.bias_z, 30);  // 65 with this seed: B = 0.055 against a noise of 0.0029 +- 0.0008
  EXPECT_NEAR(r.bias, bias(exact), 0.01);
}

}  // namespace
}  // namespace permlab::tests::butterfly_test
