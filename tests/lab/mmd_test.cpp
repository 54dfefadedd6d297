// The MMD test with the Mallows kernel (permlab/mmd.hpp): its exact pieces
// against brute force, then the paper's findings at n = 100 (24 rounds
// passes, the LCG bijection fails).
#include "mmd.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "extshuffle/core/stream.hpp"
#include "generators.hpp"

namespace permlab::tests::mmd_test {
namespace {

std::uint64_t inversions_brute_force(const std::vector<std::uint32_t>& v) {
  std::uint64_t count = 0;
  for (std::size_t i = 0; i < v.size(); ++i) {
    for (std::size_t j = i + 1; j < v.size(); ++j) count += v[i] > v[j] ? 1 : 0;
  }
  return count;
}

std::vector<std::uint32_t> random_order(std::uint64_t n, std::uint64_t index) {
  std::vector<std::uint32_t> v(n);
  std::iota(v.begin(), v.end(), 0u);
  auto stream = sample_stream(99, index);
  for (std::uint64_t i = n; i > 1; --i) std::swap(v[i - 1], v[stream.next_below(i)]);  // Fisher-Yates
  return v;
}

TEST(Mmd, MergeSortCountsInversions) {
  std::vector<std::uint32_t> scratch;
  for (std::uint64_t n : {0, 1, 2, 3, 7, 64, 100, 1000}) {
    for (std::uint64_t s = 0; s < 5; ++s) {
      const auto v = random_order(n, n * 10 + s);
      ASSERT_EQ(count_inversions(v, scratch), inversions_brute_force(v)) << "n " << n;
    }
  }
  std::vector<std::uint32_t> reversed(500);
  std::iota(reversed.rbegin(), reversed.rend(), 0u);
  EXPECT_EQ(count_inversions(reversed, scratch), 500ull * 499 / 2);
}

TEST(Mmd, DiscordantPairsIsKendallDistance) {
  std::vector<std::uint32_t> scratch;
  for (std::uint64_t s = 0; s < 20; ++s) {
    const auto a = random_order(50, 1000 + s), b = random_order(50, 2000 + s);
    std::uint64_t brute = 0;
    for (std::size_t i = 0; i < 50; ++i) {
      for (std::size_t j = i + 1; j < 50; ++j) brute += (a[i] < a[j]) != (b[i] < b[j]) ? 1 : 0;
    }
    EXPECT_EQ(discordant_pairs(a, b, scratch), brute);
    EXPECT_EQ(discordant_pairs(b, a, scratch), brute);
  }
}

// The product formula for E[K(I, s)] (and so Var(K)) against the average
// over all n! orders.
TEST(Mmd, KernelMeanAndVarianceMatchEnumeration) {
  std::vector<std::uint32_t> scratch;
  for (std::uint64_t n = 2; n <= 7; ++n) {
    std::vector<std::uint32_t> v(n);
    std::iota(v.begin(), v.end(), 0u);
    double sum = 0, sum_squares = 0, count = 0;
    do {
      const double k = mallows_kernel(count_inversions(v, scratch), n, 5.0);
      sum += k;
      sum_squares += k * k;
      ++count;
    } while (std::next_permutation(v.begin(), v.end()));
    const double mean = sum / count;
    EXPECT_NEAR(mallows_mean(n, 5.0), mean, 1e-13) << n;
    EXPECT_NEAR(mallows_variance(n, 5.0), sum_squares / count - mean * mean, 1e-13) << n;
  }
}

// The thresholds as written in mmd.hpp: Hoeffding sqrt(log(2/alpha)/m), CLT
// sqrt(2 Var(K)/m) z_{1-alpha/2} (the revised paper's factor of two).
TEST(Mmd, ThresholdsUseTheRevisedVariance) {
  const MmdResult r = mmd_from_sums(100, 1000, 500 * mallows_mean(100, 5.0), 1000 * mallows_mean(100, 5.0), 5.0, 0.05);
  EXPECT_NEAR(r.statistic, 0.0, 1e-15);
  EXPECT_NEAR(r.hoeffding_threshold, std::sqrt(std::log(40.0) / 1000), 1e-15);
  EXPECT_NEAR(r.clt_threshold, std::sqrt(2 * mallows_variance(100, 5.0) / 1000) * 1.959963984540054, 1e-12);
  EXPECT_NEAR(r.identity_clt_threshold, r.clt_threshold / std::sqrt(2.0), 1e-12);
  EXPECT_NEAR(normal_two_sided_quantile(0.01), 2.5758293035489004, 1e-12);
}

// n = 100, 20000 samples (10000 pairs). 24 rounds must pass the CLT
// threshold at alpha = 1e-4: false-failure rate 1e-4 (normal approximation;
// Hoeffding would be looser still). The LCG bijection (Mitchell 3.1) fails:
// its z is ~10 here, the threshold 3.9.
TEST(Mmd, TwentyFourRoundsPassAndLcgFailsAtHundredRecords) {
  GeneratorOptions o;
  o.seed = 3;
  const MmdResult good = permlab::mmd_test(o, 100, 20000, 2, 1e-4);
  EXPECT_TRUE(good.pass_clt) << "MMD^2 " << good.statistic << " z " << good.z;
  EXPECT_TRUE(good.pass_hoeffding);
  o.kind = "lcg";
  const MmdResult lcg = permlab::mmd_test(o, 100, 20000, 2, 1e-4);
  EXPECT_FALSE(lcg.pass_clt) << "MMD^2 " << lcg.statistic << " z " << lcg.z;
}

// Results do not depend on the thread count, not even in the last bit.
TEST(Mmd, IndependentOfThreadCount) {
  GeneratorOptions o;
  o.rounds = 8;
  const MmdResult one = permlab::mmd_test(o, 50, 5000, 1, 0.01), two = permlab::mmd_test(o, 50, 5000, 2, 0.01);
  EXPECT_EQ(one.statistic, two.statistic);
  EXPECT_EQ(one.identity_statistic, two.identity_statistic);
}

}  // namespace
}  // namespace permlab::tests::mmd_test
