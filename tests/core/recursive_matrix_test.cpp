#include "extshuffle/core/recursive_matrix.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "extshuffle/core/multivariate_hypergeometric.hpp"
#include "support/hypergeometric_pmf.hpp"
#include "support/plan_oracle.hpp"
#include "support/statistics.hpp"

// False-failure budget of this file. Every statistical check rejects at p < 1e-6:
//   RecursiveMatrix.GustedtFourRecordExample                  1 chi-square test
//   RecursiveMatrix.SmallMatricesHaveTheInducedDistribution   6 chi-square tests
//   RecursiveMatrix.EntriesAreHypergeometric                  3 chi-square tests
// 10 tests, so the file fails by chance with probability < 1e-5. All samples
// come from fixed seeds, so a given build is deterministic.

namespace extshuffle::core::recursive_matrix_test {
namespace {

constexpr double kAlpha = 1e-6;

std::uint64_t sum(std::span<const std::uint64_t> v) { return std::accumulate(v.begin(), v.end(), std::uint64_t{0}); }

// Samples the whole matrix of a node at once and checks every row and column sum.
std::vector<std::vector<std::uint64_t>> sample_checked_matrix(std::uint64_t seed, NodeId node, std::uint64_t n,
                                                              const PlanConstants& c) {
  RecursiveMatrix matrix(seed, node, n, c);
  const std::uint64_t p = bucket_count(n, c), rows = chunk_count(n, c);
  EXPECT_EQ(matrix.bucket_count(), p);
  EXPECT_EQ(matrix.row_count(), rows);
  std::vector<std::uint64_t> flat(rows * p);
  matrix.rows(0, rows, flat);
  EXPECT_EQ(matrix.splits_drawn(), rows - 1);
  std::vector<std::vector<std::uint64_t>> result(rows);
  for (std::uint64_t i = 0; i < rows; ++i) {
    result[i].assign(flat.begin() + i * p, flat.begin() + (i + 1) * p);
    EXPECT_EQ(sum(result[i]), chunk_records(n, i, c)) << "row " << i;
  }
  for (std::uint64_t j = 0; j < p; ++j) {
    std::uint64_t column = 0;
    for (const auto& row : result) column += row[j];
    EXPECT_EQ(column, bucket_records(n, p, j)) << "column " << j;
  }
  return result;
}

TEST(RecursiveMatrix, SplitPointsFollowTheRule) {
  // lo + the largest power of two below hi - lo.
  EXPECT_EQ(row_split(0, 2), 1u);
  EXPECT_EQ(row_split(0, 3), 2u);
  EXPECT_EQ(row_split(0, 4), 2u);
  EXPECT_EQ(row_split(0, 5), 4u);
  EXPECT_EQ(row_split(16, 33), 32u);
  EXPECT_EQ(row_split(7, 9), 8u);
  EXPECT_EQ(row_split(0, std::uint64_t{1} << 32), std::uint64_t{1} << 31);
  EXPECT_EQ(row_split(0, (std::uint64_t{1} << 32) + 1), std::uint64_t{1} << 32);
  EXPECT_EQ(row_tree_depth(1), 0u);
  EXPECT_EQ(row_tree_depth(2), 1u);
  EXPECT_EQ(row_tree_depth(5), 3u);
  EXPECT_EQ(row_tree_depth(std::uint64_t{1} << 32), 32u);
  // Every boundary 1..R-1 is the split of exactly one range of the tree
  // (so the split streams are distinct), for every R up to 300.
  for (std::uint64_t r = 1; r <= 300; ++r) {
    std::vector<int> uses(r, 0);
    auto walk = [&](auto&& self, std::uint64_t lo, std::uint64_t hi) -> void {
      if (hi - lo < 2) return;
      const std::uint64_t mid = row_split(lo, hi);
      ASSERT_GT(mid, lo);
      ASSERT_LT(mid, hi);
      ++uses[mid];
      self(self, lo, mid);
      self(self, mid, hi);
    };
    walk(walk, 0, r);
    for (std::uint64_t b = 1; b < r; ++b) ASSERT_EQ(uses[b], 1) << "R " << r << " boundary " << b;
    EXPECT_EQ(uses[0], 0);
  }
}

TEST(RecursiveMatrix, RowAndColumnSumsAreExact) {
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

// The library's matrix equals the oracle's independent recursion
// (support/plan_oracle.hpp), entry for entry.
TEST(RecursiveMatrix, EqualsTheOraclesRecursion) {
  for (const auto& [n, c] : {std::pair<std::uint64_t, PlanConstants>{37, {4, 3}}, {1000, {16, 4}},
                             {12345, {64, 16}}, {100003, {1000, 64}}, {1, {1, 2}}}) {
    const Node node{NodeId{2, 4242}, n};
    const std::uint64_t p = bucket_count(n, c), rows = chunk_count(n, c);
    std::vector<std::uint64_t> sums(p);
    for (std::uint64_t j = 0; j < p; ++j) sums[j] = bucket_records(n, p, j);
    std::vector<std::vector<std::uint64_t>> expected(rows);
    testing::oracle_matrix(77, node, c, 0, rows, sums, expected);
    const auto got = sample_checked_matrix(77, node.id, n, c);
    EXPECT_EQ(got, expected) << "n " << n;
  }
}

// Nodes of 2^40 records, sampled whole with few enough buckets to be quick
// (2^16 and 32769 rows), and a 2^56-record node (2^32 rows) sampled at its
// first, middle and last rows: every row and (where whole) column sum exact.
TEST(RecursiveMatrix, HugeNodesGiveExactRows) {
  for (const auto& [n, c] : {std::pair{std::uint64_t{1} << 40, PlanConstants{1u << 24, 16}},
                             std::pair{(std::uint64_t{1} << 40) + 12345, PlanConstants{1u << 25, 64}}}) {
    sample_checked_matrix(99, NodeId{0, 0}, n, c);
  }
  const std::uint64_t n = std::uint64_t{1} << 56;
  const PlanConstants c{1u << 24, 1u << 12};
  RecursiveMatrix matrix(99, NodeId{0, 0}, n, c);
  const std::uint64_t p = matrix.bucket_count(), rows = matrix.row_count();
  ASSERT_EQ(rows, std::uint64_t{1} << 32);
  for (const std::uint64_t first : {std::uint64_t{0}, rows / 2 - 2, rows - 4}) {
    std::vector<std::uint64_t> out(4 * p);
    matrix.rows(first, first + 4, out);
    for (std::uint64_t i = 0; i < 4; ++i) {
      EXPECT_EQ(sum(std::span<const std::uint64_t>(out).subspan(i * p, p)), c.leaf_records) << "row " << first + i;
    }
    for (std::uint64_t j = 0; j < p; ++j) ASSERT_LE(out[j], bucket_records(n, p, j));
  }
}

TEST(RecursiveMatrix, GustedtFourRecordExample) {
  const PlanConstants c{2, 2};
  std::vector<std::uint64_t> counts(3, 0);
  for (std::uint64_t seed = 0; seed < 60000; ++seed) {
    const auto m = sample_checked_matrix(seed, NodeId{0, 0}, 4, c);
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
// six small nodes (up to 3 x 3, 5 x 2, 6 x 2, 7 x 2: balanced and lopsided
// range trees, splits of up to three levels), 40000 seeds each; cells pooled
// to >= 5 expected. 6 tests, p < 1e-6 each.
TEST(RecursiveMatrix, SmallMatricesHaveTheInducedDistribution) {
  struct Config {
    std::uint64_t n;
    PlanConstants c;
  };
  std::uint64_t node_first = 0;
  for (const Config& cfg : {Config{7, {3, 3}}, Config{6, {2, 3}}, Config{9, {2, 2}}, Config{8, {3, 4}},
                            Config{6, {1, 2}}, Config{7, {1, 2}}}) {
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
      const auto m = sample_checked_matrix(seed, NodeId{1, node_first}, cfg.n, cfg.c);
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

// Gustedt's Proposition 3: each entry a_ij ~ h(m'_j, m_i, n - m_i), for a
// row of the lower half (row 5 of 10), the last row (row 9) and a row drawn
// alone, through its path only (row 6). n = 1000, L = 100, F = 8: buckets of
// 125. 30000 seeds, 3 tests, p < 1e-6 each.
TEST(RecursiveMatrix, EntriesAreHypergeometric) {
  const PlanConstants c{100, 8};
  const std::uint64_t n = 1000;
  std::vector<std::uint64_t> counts_mid(101, 0), counts_last(101, 0), counts_alone(101, 0);
  std::vector<std::uint64_t> rows(10 * 8), row(8);
  for (std::uint64_t seed = 0; seed < 30000; ++seed) {
    RecursiveMatrix whole(seed, NodeId{2, 77}, n, c);
    whole.rows(0, 10, rows);
    ++counts_mid[rows[5 * 8 + 3]];
    ++counts_last[rows[9 * 8 + 7]];
    RecursiveMatrix alone(seed + 1000000, NodeId{2, 77}, n, c);
    alone.rows(6, 7, row);
    ++counts_alone[row[0]];
  }
  const auto pmf = testing::hypergeometric_pmf(125, 100, 900);
  for (const auto* counts : {&counts_mid, &counts_last, &counts_alone}) {
    const auto r = testing::pooled_chi_square(*counts, pmf);
    EXPECT_GT(r.p_value, kAlpha) << "chi2 " << r.statistic << " dof " << r.dof;
  }
}

// Rows of random ranges [first, end), drawn by a fresh matrix and by one
// that drew other ranges before (its path cache), equal the same rows of the
// whole matrix drawn at once; nodes of 1 to 2^20 chunks.
TEST(RecursiveMatrix, RangesEqualTheWholeMatrix) {
  Stream pick(11, StreamAddress{NodeId{0, 0}, Purpose::kLab, 40});
  for (const auto& [n, c] : {std::pair<std::uint64_t, PlanConstants>{1, {1, 2}}, {2, {1, 2}}, {3, {1, 3}},
                             {37, {4, 3}}, {1000, {1, 7}}, {65537 * 3 + 1, {3, 16}},
                             {std::uint64_t{1} << 20, {1, 2}}}) {
    const NodeId node{1, 999};
    RecursiveMatrix whole(5, node, n, c), reused(5, node, n, c);
    const std::uint64_t p = whole.bucket_count(), rows = whole.row_count();
    std::vector<std::uint64_t> all(rows * p);
    whole.rows(0, rows, all);
    for (int t = 0; t < 200; ++t) {
      const std::uint64_t first = pick.next_below(rows);
      const std::uint64_t length = 1 + pick.next_below(std::min<std::uint64_t>(rows - first, t % 4 == 0 ? 4096 : 64));
      std::vector<std::uint64_t> fresh_rows(length * p), reused_rows(length * p);
      RecursiveMatrix fresh(5, node, n, c);
      fresh.rows(first, first + length, fresh_rows);
      reused.rows(first, first + length, reused_rows);
      const std::vector<std::uint64_t> expected(all.begin() + first * p, all.begin() + (first + length) * p);
      ASSERT_EQ(fresh_rows, expected) << "n " << n << " rows [" << first << ", " << first + length << ")";
      ASSERT_EQ(reused_rows, expected) << "n " << n << " rows [" << first << ", " << first + length << ")";
    }
  }
}

// The column sums of rows [0, first) equal the sums of those rows of the
// whole matrix, from a fresh matrix (its path only: at most the tree's depth
// of splits) and from one that drew other ranges before; nodes of 1 to 2^20
// chunks, every first from 0 to R. Deterministic: false-failure rate 0.
TEST(RecursiveMatrix, ColumnSumsBeforeARowEqualTheSumOfTheRowsAbove) {
  Stream pick(13, StreamAddress{NodeId{0, 0}, Purpose::kLab, 42});
  for (const auto& [n, c] : {std::pair<std::uint64_t, PlanConstants>{1, {1, 2}}, {2, {1, 2}}, {37, {4, 3}},
                             {1000, {1, 7}}, {65537 * 3 + 1, {3, 16}}, {std::uint64_t{1} << 20, {1, 2}}}) {
    const NodeId node{2, 77};
    RecursiveMatrix whole(9, node, n, c), reused(9, node, n, c);
    const std::uint64_t p = whole.bucket_count(), rows = whole.row_count();
    std::vector<std::uint64_t> all(rows * p);
    whole.rows(0, rows, all);
    for (int t = 0; t < 60; ++t) {
      const std::uint64_t first = t == 0 ? rows : t == 1 ? 0 : pick.next_below(rows + 1);
      std::vector<std::uint64_t> expected(p, 0), fresh_sums(p), reused_sums(p);
      for (std::uint64_t i = 0; i < first; ++i) {
        for (std::uint64_t j = 0; j < p; ++j) expected[j] += all[i * p + j];
      }
      RecursiveMatrix fresh(9, node, n, c);
      fresh.column_sums_before(first, fresh_sums);
      reused.column_sums_before(first, reused_sums);
      ASSERT_EQ(fresh_sums, expected) << "n " << n << " first " << first;
      ASSERT_EQ(reused_sums, expected) << "n " << n << " first " << first;
      EXPECT_LE(fresh.splits_drawn(), row_tree_depth(rows)) << "n " << n << " first " << first;
      if (first < rows) {  // a range starting there agrees with the sums' path
        std::vector<std::uint64_t> row(p);
        reused.rows(first, first + 1, row);
        ASSERT_TRUE(std::equal(row.begin(), row.end(), all.begin() + first * p));
      }
    }
  }
}

// The cost of a range is its path plus its inside: a fresh matrix draws at
// most (end - first - 1) + 2 x depth splits for rows [first, end), wherever
// they start; consecutive ranges through one matrix draw each split once,
// R - 1 in all, however the rows are cut.
TEST(RecursiveMatrix, RangesCostTheirPathAndTheirInside) {
  const PlanConstants c{1, 2};
  const std::uint64_t n = (std::uint64_t{1} << 20) + 12345;
  const std::uint64_t depth = row_tree_depth(chunk_count(n, c));
  Stream pick(12, StreamAddress{NodeId{0, 0}, Purpose::kLab, 41});
  for (int t = 0; t < 100; ++t) {
    const std::uint64_t first = pick.next_below(n);
    const std::uint64_t end = first + 1 + pick.next_below(std::min<std::uint64_t>(n - first, 300));
    RecursiveMatrix matrix(3, NodeId{0, 0}, n, c);
    std::vector<std::uint64_t> out((end - first) * 2);
    matrix.rows(first, end, out);
    EXPECT_LE(matrix.splits_drawn(), (end - first - 1) + 2 * depth) << "[" << first << ", " << end << ")";
  }
  for (const std::uint64_t group : {1u, 16u, 37u}) {
    RecursiveMatrix matrix(3, NodeId{0, 0}, 100003, PlanConstants{1, 4});
    std::vector<std::uint64_t> out;
    for (std::uint64_t first = 0; first < 100003; first += group) {
      const std::uint64_t end = std::min<std::uint64_t>(100003, first + group);
      out.resize((end - first) * 4);
      matrix.rows(first, end, out);
    }
    EXPECT_EQ(matrix.splits_drawn(), 100002u) << "groups of " << group;
  }
}

TEST(RecursiveMatrix, SplitsAreAddressedBySeedNodeAndBoundary) {
  const PlanConstants c{64, 16};
  const std::uint64_t n = 5000;
  const auto a = sample_checked_matrix(5, NodeId{1, 1000}, n, c);
  EXPECT_EQ(a, sample_checked_matrix(5, NodeId{1, 1000}, n, c));
  EXPECT_NE(a, sample_checked_matrix(6, NodeId{1, 1000}, n, c));
  EXPECT_NE(a, sample_checked_matrix(5, NodeId{2, 1000}, n, c));
  EXPECT_NE(a, sample_checked_matrix(5, NodeId{1, 1001}, n, c));
  // The root (79 rows) splits at row 64: rows 64..78 together are
  // MultiVarHyp of their records over the bucket sizes, from stream
  // (node, kMatrixSplit, 64).
  const std::uint64_t rows = chunk_count(n, c), p = bucket_count(n, c);
  ASSERT_EQ(row_split(0, rows), 64u);
  std::vector<std::uint64_t> sizes(p), upper(p), expected(p, 0);
  for (std::uint64_t j = 0; j < p; ++j) sizes[j] = bucket_records(n, p, j);
  Stream stream(5, StreamAddress{NodeId{1, 1000}, Purpose::kMatrixSplit, 64});
  multivariate_hypergeometric(n - 64 * 64, sizes, upper, stream);
  for (std::uint64_t i = 64; i < rows; ++i) {
    for (std::uint64_t j = 0; j < p; ++j) expected[j] += a[i][j];
  }
  EXPECT_EQ(upper, expected);
}

TEST(RecursiveMatrix, RejectsMisuse) {
  const PlanConstants c{4, 3};
  RecursiveMatrix matrix(1, NodeId{0, 0}, 37, c);
  std::vector<std::uint64_t> wrong(2), row(3), two(6);
  EXPECT_THROW(matrix.rows(0, 1, wrong), std::invalid_argument);
  EXPECT_THROW(matrix.rows(0, 2, row), std::invalid_argument);
  EXPECT_THROW(matrix.rows(3, 3, row), std::out_of_range);
  EXPECT_THROW(matrix.rows(9, 11, two), std::out_of_range);
  EXPECT_THROW(matrix.rows(10, 11, row), std::out_of_range);
  EXPECT_EQ(matrix.splits_drawn(), 0u);
  EXPECT_NO_THROW(matrix.rows(9, 10, row));
  EXPECT_THROW(RecursiveMatrix(1, NodeId{0, 0}, 0, c), std::invalid_argument);
  EXPECT_THROW(RecursiveMatrix(1, NodeId{0, 0}, 37, PlanConstants{0, 3}), std::invalid_argument);
  EXPECT_THROW(RecursiveMatrix(1, NodeId{0, 0}, 37, PlanConstants{4, 1}), std::invalid_argument);
  EXPECT_THROW(RecursiveMatrix(1, NodeId{256, 0}, 37, c), std::out_of_range);
}

}  // namespace
}  // namespace extshuffle::core::recursive_matrix_test
