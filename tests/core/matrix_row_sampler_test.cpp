#include "extshuffle/core/matrix_row_sampler.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <map>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "extshuffle/core/multivariate_hypergeometric.hpp"
#include "support/statistics.hpp"

// False-failure budget of this file. Every statistical check rejects at p < 1e-6:
//   MatrixRowSampler.GustedtFourRecordExample                 1 chi-square test
//   MatrixRowSampler.SmallMatricesHaveTheInducedDistribution  4 chi-square tests
//   MatrixRowSampler.EntriesAreHypergeometric                 2 chi-square tests
//   MultivariateHypergeometric.MarginalsAreHypergeometric     3 chi-square tests
// 10 tests, so the file fails by chance with probability < 1e-5. All samples
// come from fixed seeds, so a given build is deterministic.

namespace extshuffle::core {
namespace {

constexpr double kAlpha = 1e-6;

std::uint64_t sum(std::span<const std::uint64_t> v) { return std::accumulate(v.begin(), v.end(), std::uint64_t{0}); }

// Samples the whole matrix of a node and checks every row and column sum
// (and, unless told not to, that a further row is refused: a throw costs
// microseconds, too much inside the statistical loops).
std::vector<std::vector<std::uint64_t>> sample_checked_matrix(std::uint64_t seed, NodeId node, std::uint64_t n,
                                                              const PlanConstants& c, bool check_end = true) {
  MatrixRowSampler sampler(seed, node, n, c);
  const std::uint64_t p = bucket_count(n, c);
  EXPECT_EQ(sampler.bucket_count(), p);
  EXPECT_EQ(sampler.row_count(), chunk_count(n, c));
  std::vector<std::vector<std::uint64_t>> matrix;
  std::vector<std::uint64_t> before(sampler.remaining_capacities().begin(), sampler.remaining_capacities().end());
  for (std::uint64_t i = 0; i < chunk_count(n, c); ++i) {
    EXPECT_EQ(sampler.rows_sampled(), i);
    std::vector<std::uint64_t> row(p);
    sampler.next_row(row);
    EXPECT_EQ(sum(row), chunk_records(n, i, c)) << "row " << i;
    for (std::uint64_t j = 0; j < p; ++j) {
      EXPECT_LE(row[j], before[j]);
      EXPECT_EQ(sampler.remaining_capacities()[j], before[j] - row[j]);
      before[j] -= row[j];
    }
    matrix.push_back(std::move(row));
  }
  for (std::uint64_t j = 0; j < p; ++j) {
    std::uint64_t column = 0;
    for (const auto& row : matrix) column += row[j];
    EXPECT_EQ(column, bucket_records(n, p, j)) << "column " << j;
    EXPECT_EQ(sampler.remaining_capacities()[j], 0u);
  }
  if (check_end) {
    std::vector<std::uint64_t> row(p);
    EXPECT_THROW(sampler.next_row(row), std::logic_error);
  }
  return matrix;
}

TEST(MatrixRowSampler, RowAndColumnSumsAreExact) {
  struct Config {
    std::uint64_t n;
    PlanConstants c;
  };
  for (const Config& cfg : {Config{37, {4, 3}}, Config{4, {2, 2}}, Config{5, {2, 2}}, Config{3, {1, 2}},
                            Config{100, {7, 5}}, Config{1000, {16, 4}}, Config{12345, {64, 16}},
                            Config{100003, {1000, 64}}, Config{(1u << 20) + 3, {1u << 12, 1u << 8}},
                            Config{16, {16, 4}} /* a leaf: one row, one bucket */}) {
    for (std::uint64_t seed : {1ull, 2ull, 0xdeadbeefull}) {
      for (const NodeId node : {NodeId{0, 0}, NodeId{3, 123456}}) {
        sample_checked_matrix(seed, node, cfg.n, cfg.c);
      }
    }
  }
}

// n = 2^40 under kPlanV1 (2^24 rows of 2^16 records, 256 buckets) and an
// unbalanced node: a few rows only, each exact.
TEST(MatrixRowSampler, HugeNodesGiveExactRows) {
  for (const auto& [n, c] : {std::pair{std::uint64_t{1} << 40, kPlanV1},
                             std::pair{(std::uint64_t{1} << 40) + 12345, PlanConstants{1u << 16, 1u << 12}},
                             std::pair{std::uint64_t{1} << 56, PlanConstants{1u << 24, 1u << 12}}}) {
    MatrixRowSampler sampler(99, NodeId{0, 0}, n, c);
    const std::uint64_t p = bucket_count(n, c);
    ASSERT_EQ(sampler.bucket_count(), p);
    std::vector<std::uint64_t> before(sampler.remaining_capacities().begin(), sampler.remaining_capacities().end());
    EXPECT_EQ(sum(before), n);
    std::vector<std::uint64_t> row(p);
    for (std::uint64_t i = 0; i < 4; ++i) {
      sampler.next_row(row);
      EXPECT_EQ(sum(row), c.leaf_records);
      for (std::uint64_t j = 0; j < p; ++j) {
        ASSERT_LE(row[j], before[j]);
        before[j] -= row[j];
      }
    }
    EXPECT_EQ(sampler.rows_sampled(), 4u);
    EXPECT_TRUE(std::equal(before.begin(), before.end(), sampler.remaining_capacities().begin()));
    EXPECT_EQ(sum(sampler.remaining_capacities()), n - 4 * c.leaf_records);
  }
}

// Gustedt, section 2: 4 records in 2 chunks of 2 sent to 2 buckets of 2. Of
// the 24 permutations, 4 give [[2,0],[0,2]], 16 give [[1,1],[1,1]] and 4 give
// [[0,2],[2,0]]. 60000 seeds; chi-square with 2 dof, p < 1e-6 fails.
TEST(MatrixRowSampler, GustedtFourRecordExample) {
  const PlanConstants c{2, 2};
  std::vector<std::uint64_t> counts(3, 0);
  for (std::uint64_t seed = 0; seed < 60000; ++seed) {
    const auto m = sample_checked_matrix(seed, NodeId{0, 0}, 4, c, false);
    ASSERT_EQ(m.size(), 2u);
    ASSERT_EQ(m[1][0], 2 - m[0][0]);
    ++counts[2 - m[0][0]];  // [2,0] -> 0, [1,1] -> 1, [0,2] -> 2
  }
  const double stat = testing::chi_square_statistic(counts, std::vector<double>{4.0 / 24, 16.0 / 24, 4.0 / 24});
  EXPECT_GT(testing::chi_square_p_value(stat, 2), kAlpha)
      << counts[0] << " " << counts[1] << " " << counts[2] << " chi2 " << stat;
}

// Every matrix A with the node's row sums m_i and column sums m'_j, with the
// probability induced by a uniform permutation (Gustedt, Problem 2): the
// number of permutations realising A is prod_i m_i! prod_j m'_j! / prod a_ij!
// (choose which records of chunk i go to each bucket, then order each bucket).
std::map<std::vector<std::uint64_t>, double> induced_distribution(std::uint64_t n, const PlanConstants& c) {
  const std::uint64_t rows = chunk_count(n, c), p = bucket_count(n, c);
  auto log_fact = [](std::uint64_t k) { return std::lgamma(static_cast<double>(k) + 1.0); };
  double log_base = -log_fact(n);
  for (std::uint64_t i = 0; i < rows; ++i) log_base += log_fact(chunk_records(n, i, c));
  for (std::uint64_t j = 0; j < p; ++j) log_base += log_fact(bucket_records(n, p, j));
  std::map<std::vector<std::uint64_t>, double> result;
  std::vector<std::uint64_t> a(rows * p, 0), column_left(p);
  for (std::uint64_t j = 0; j < p; ++j) column_left[j] = bucket_records(n, p, j);
  // Depth-first over cells in row-major order; the last cell of each row is forced.
  auto recurse = [&](auto&& self, std::uint64_t cell, std::uint64_t row_left) -> void {
    const std::uint64_t i = cell / p, j = cell % p;
    if (i == rows) {
      double log_weight = log_base;
      for (std::uint64_t v : a) log_weight -= log_fact(v);
      result[a] = std::exp(log_weight);
      return;
    }
    const std::uint64_t next_row_left = j + 1 == p && i + 1 < rows ? chunk_records(n, i + 1, c) : 0;
    if (j + 1 == p) {
      if (row_left > column_left[j]) return;
      a[cell] = row_left;
      column_left[j] -= row_left;
      self(self, cell + 1, next_row_left);
      column_left[j] += row_left;
      return;
    }
    for (std::uint64_t v = 0; v <= std::min(row_left, column_left[j]); ++v) {
      a[cell] = v;
      column_left[j] -= v;
      self(self, cell + 1, row_left - v);
      column_left[j] += v;
    }
  };
  recurse(recurse, 0, chunk_records(n, 0, c));
  return result;
}

// Chi-square of the sampled matrices against the induced distribution for
// four small nodes (up to 3 x 3, 5 x 2), 40000 seeds each; cells pooled to
// >= 5 expected. 4 tests, p < 1e-6 each.
TEST(MatrixRowSampler, SmallMatricesHaveTheInducedDistribution) {
  struct Config {
    std::uint64_t n;
    PlanConstants c;
  };
  std::uint64_t node_first = 0;
  for (const Config& cfg : {Config{7, {3, 3}}, Config{6, {2, 3}}, Config{9, {2, 2}}, Config{8, {3, 4}}}) {
    const auto exact = induced_distribution(cfg.n, cfg.c);
    double total_probability = 0;
    std::map<std::vector<std::uint64_t>, std::size_t> index;
    std::vector<double> probabilities;
    for (const auto& [matrix, probability] : exact) {
      index[matrix] = probabilities.size();
      probabilities.push_back(probability);
      total_probability += probability;
    }
    ASSERT_NEAR(total_probability, 1.0, 1e-12) << "n " << cfg.n;
    std::vector<std::uint64_t> counts(probabilities.size(), 0);
    for (std::uint64_t seed = 0; seed < 40000; ++seed) {
      const auto m = sample_checked_matrix(seed, NodeId{1, node_first}, cfg.n, cfg.c, false);
      std::vector<std::uint64_t> flat;
      for (const auto& row : m) flat.insert(flat.end(), row.begin(), row.end());
      const auto it = index.find(flat);
      ASSERT_NE(it, index.end());
      ++counts[it->second];
    }
    const auto r = testing::pooled_chi_square(counts, probabilities);
    EXPECT_GT(r.p_value, kAlpha) << "n " << cfg.n << " L " << cfg.c.leaf_records << " F " << cfg.c.max_fanout
                                 << ": " << probabilities.size() << " matrices, chi2 " << r.statistic << " dof "
                                 << r.dof;
    node_first += 1000;
  }
}

std::vector<double> hypergeometric_pmf(std::uint64_t draws, std::uint64_t white, std::uint64_t black) {
  std::vector<double> pmf(std::min(draws, white) + 1, 0.0);
  const auto log_choose = [](std::uint64_t a, std::uint64_t b) {
    return std::lgamma(a + 1.0) - std::lgamma(b + 1.0) - std::lgamma(a - b + 1.0);
  };
  for (std::uint64_t k = 0; k < pmf.size(); ++k) {
    if (draws - k > black) continue;
    pmf[k] = std::exp(log_choose(white, k) + log_choose(black, draws - k) - log_choose(white + black, draws));
  }
  return pmf;
}

// Gustedt's Proposition 3: each entry a_ij ~ h(m'_j, m_i, n - m_i), also for
// rows sampled after others (row 5) and for the last, forced row (row 9).
// n = 1000, L = 100, F = 8: buckets of 125. 30000 seeds, 2 tests, p < 1e-6 each.
TEST(MatrixRowSampler, EntriesAreHypergeometric) {
  const PlanConstants c{100, 8};
  const std::uint64_t n = 1000;
  std::vector<std::uint64_t> counts_mid(101, 0), counts_last(101, 0);
  for (std::uint64_t seed = 0; seed < 30000; ++seed) {
    MatrixRowSampler sampler(seed, NodeId{2, 77}, n, c);
    std::vector<std::uint64_t> row(8);
    for (std::uint64_t i = 0; i < 10; ++i) {
      sampler.next_row(row);
      if (i == 5) ++counts_mid[row[3]];
      if (i == 9) ++counts_last[row[7]];
    }
  }
  const auto pmf = hypergeometric_pmf(125, 100, 900);
  const auto r_mid = testing::pooled_chi_square(counts_mid, pmf);
  const auto r_last = testing::pooled_chi_square(counts_last, pmf);
  EXPECT_GT(r_mid.p_value, kAlpha) << "chi2 " << r_mid.statistic << " dof " << r_mid.dof;
  EXPECT_GT(r_last.p_value, kAlpha) << "chi2 " << r_last.statistic << " dof " << r_last.dof;
}

TEST(MatrixRowSampler, RowsAreAddressedBySeedNodeAndIndex) {
  const PlanConstants c{64, 16};
  const std::uint64_t n = 5000;
  const auto a = sample_checked_matrix(5, NodeId{1, 1000}, n, c);
  EXPECT_EQ(a, sample_checked_matrix(5, NodeId{1, 1000}, n, c));
  EXPECT_NE(a, sample_checked_matrix(6, NodeId{1, 1000}, n, c));
  EXPECT_NE(a, sample_checked_matrix(5, NodeId{2, 1000}, n, c));
  EXPECT_NE(a, sample_checked_matrix(5, NodeId{1, 1001}, n, c));
  // Row 0 is MultiVarHyp of chunk 0 over the initial capacities, from stream (node, kMatrixRow, 0).
  const std::uint64_t p = bucket_count(n, c);
  std::vector<std::uint64_t> capacities(p), row(p);
  for (std::uint64_t j = 0; j < p; ++j) capacities[j] = bucket_records(n, p, j);
  Stream stream(5, StreamAddress{NodeId{1, 1000}, Purpose::kMatrixRow, 0});
  multivariate_hypergeometric(chunk_records(n, 0, c), capacities, row, stream);
  EXPECT_EQ(row, a[0]);
}

TEST(MatrixRowSampler, RejectsMisuse) {
  const PlanConstants c{4, 3};
  MatrixRowSampler sampler(1, NodeId{0, 0}, 37, c);
  std::vector<std::uint64_t> wrong(2), row(3);
  EXPECT_THROW(sampler.next_row(wrong), std::invalid_argument);
  EXPECT_EQ(sampler.rows_sampled(), 0u);
  for (int i = 0; i < 10; ++i) sampler.next_row(row);
  EXPECT_THROW(sampler.next_row(row), std::logic_error);
  EXPECT_EQ(sampler.rows_sampled(), 10u);
  EXPECT_THROW(MatrixRowSampler(1, NodeId{0, 0}, 0, c), std::invalid_argument);
  EXPECT_THROW(MatrixRowSampler(1, NodeId{0, 0}, 37, PlanConstants{0, 3}), std::invalid_argument);
  EXPECT_THROW(MatrixRowSampler(1, NodeId{0, 0}, 37, PlanConstants{4, 1}), std::invalid_argument);
  EXPECT_THROW(MatrixRowSampler(1, NodeId{256, 0}, 37, c), std::out_of_range);
}

TEST(MultivariateHypergeometric, SumsAndBoundsAreExact) {
  Stream s(3, StreamAddress{NodeId{0, 0}, Purpose::kLab, 1});
  for (int t = 0; t < 3000; ++t) {
    const std::size_t colours = 1 + s.next_below(12);
    std::vector<std::uint64_t> counts(colours), out(colours);
    // Small, zero and huge colours (up to 2^59 each, total < 2^63).
    const int scale = static_cast<int>(s.next_below(3));
    for (auto& count : counts) {
      count = s.next_below(4) == 0 ? 0 : s.next_below(scale == 0 ? 20 : scale == 1 ? 100000 : std::uint64_t{1} << 59);
    }
    const std::uint64_t total = sum(counts);
    const std::uint64_t draws = t % 7 == 0 ? total : t % 7 == 1 ? 0 : s.next_below(total + 1);
    multivariate_hypergeometric(draws, counts, out, s);
    ASSERT_EQ(sum(out), draws);
    for (std::size_t j = 0; j < colours; ++j) ASSERT_LE(out[j], counts[j]);
    if (draws == total) {
      EXPECT_EQ(out, counts);
    }
  }
}

TEST(MultivariateHypergeometric, RejectsImpossibleDraws) {
  Stream s(3, StreamAddress{NodeId{0, 0}, Purpose::kLab, 2});
  std::vector<std::uint64_t> counts{3, 4, 5}, out(3, 77), short_out(2);
  EXPECT_THROW(multivariate_hypergeometric(13, counts, out, s), std::invalid_argument);
  EXPECT_EQ(out, std::vector<std::uint64_t>(3, 77));
  EXPECT_THROW(multivariate_hypergeometric(1, counts, short_out, s), std::invalid_argument);
  std::vector<std::uint64_t> huge{std::uint64_t{1} << 62, std::uint64_t{1} << 62, 1}, huge_out(3);
  EXPECT_THROW(multivariate_hypergeometric(1, huge, huge_out, s), std::invalid_argument);
  std::vector<std::uint64_t> none, none_out;
  EXPECT_NO_THROW(multivariate_hypergeometric(0, none, none_out, s));
  EXPECT_THROW(multivariate_hypergeometric(1, none, none_out, s), std::invalid_argument);
}

// out[j] ~ h(draws, c_j, total - c_j) for the first, a middle and the last
// colour (the last is what is left after the others). 40000 draws of 30 from
// {5, 0, 17, 3, 40, 9}; 3 chi-square tests, p < 1e-6 each.
TEST(MultivariateHypergeometric, MarginalsAreHypergeometric) {
  Stream s(4, StreamAddress{NodeId{0, 0}, Purpose::kLab, 3});
  const std::vector<std::uint64_t> counts{5, 0, 17, 3, 40, 9};
  const std::uint64_t total = sum(counts), draws = 30;
  std::vector<std::uint64_t> out(counts.size());
  std::vector<std::vector<std::uint64_t>> marginal(counts.size());
  for (std::size_t j = 0; j < counts.size(); ++j) marginal[j].assign(counts[j] + 1, 0);
  for (int t = 0; t < 40000; ++t) {
    multivariate_hypergeometric(draws, counts, out, s);
    for (std::size_t j = 0; j < counts.size(); ++j) ++marginal[j][out[j]];
  }
  for (std::size_t j : {std::size_t{0}, std::size_t{2}, std::size_t{5}}) {
    const auto r = testing::pooled_chi_square(marginal[j], hypergeometric_pmf(draws, counts[j], total - counts[j]));
    EXPECT_GT(r.p_value, kAlpha) << "colour " << j << " chi2 " << r.statistic << " dof " << r.dof;
  }
  EXPECT_EQ(marginal[1][0], 40000u);
}

}  // namespace
}  // namespace extshuffle::core
