// The adjacency (successions) test, permlab/adjacency.hpp.
#include "adjacency.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <vector>

#include "generators.hpp"

namespace permlab::tests::adjacency_test {
namespace {

// Mean (n-1)/n and variance (n^2 - n - 1)/n^2 of the successions of a
// uniform permutation, against all n! orders.
TEST(Adjacency, MomentsMatchEnumeration) {
  for (std::uint64_t n = 2; n <= 8; ++n) {
    std::vector<std::uint32_t> v(n);
    std::iota(v.begin(), v.end(), 0u);
    double sum = 0, sum_squares = 0, count = 0;
    do {
      double s = 0;
      for (std::size_t i = 0; i + 1 < n; ++i) s += v[i + 1] == v[i] + 1 ? 1 : 0;
      sum += s;
      sum_squares += s * s;
      ++count;
    } while (std::next_permutation(v.begin(), v.end()));
    const AdjacencyResult r = adjacency_of_counts(n, 1, 0, 0, 0.01);
    EXPECT_NEAR(r.expected, sum / count, 1e-12) << n;
    EXPECT_NEAR(r.sd * r.sd, sum_squares / count - (sum / count) * (sum / count), 1e-12) << n;
  }
}

// n = 100, 20000 samples. The bijective shuffle (24 rounds) and the whole
// plan must pass at alpha = 1e-4 (false-failure rate 1e-4 each, normal
// approximation of a near-Poisson total with mean ~2e4). The LCG keeps
// neighbours together (a = 1 is a rotation): certain failure.
TEST(Adjacency, ShufflesPassAndLcgFails) {
  GeneratorOptions o;
  o.seed = 9;
  EXPECT_TRUE(permlab::adjacency_test(o, 100, 20000, 2, 1e-4).pass);
  o.kind = "plan";
  o.leaf_records = 16;
  o.fanout = 4;
  EXPECT_TRUE(permlab::adjacency_test(o, 100, 20000, 2, 1e-4).pass);
  o.kind = "lcg";
  const AdjacencyResult lcg = permlab::adjacency_test(o, 100, 20000, 2, 1e-4);
  EXPECT_FALSE(lcg.pass);
  EXPECT_GT(lcg.z_successions, 10);
}

}  // namespace
}  // namespace permlab::tests::adjacency_test
