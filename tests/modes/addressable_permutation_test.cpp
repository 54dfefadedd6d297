// The addressable permutation (extshuffle/modes/addressable_permutation.hpp)
// against the independent oracle, which computes all N: any position, any
// stride, at every level count; and its inverse against its forward.
#include "extshuffle/modes/addressable_permutation.hpp"

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "device/cpu/variable_philox_batch.hpp"
#include "extshuffle/core/recursive_matrix.hpp"
#include "extshuffle/core/variable_philox_inverse.hpp"
#include "modes/matrix_columns.hpp"
#include "modes/shuffle_compaction.hpp"
#include "support/plan_oracle.hpp"

namespace extshuffle::modes::addressable_permutation_test {
namespace {

void expect_matches_oracle(std::uint64_t n, std::uint64_t seed, const core::PlanConstants& c) {
  const std::vector<std::uint64_t> order = testing::oracle_order(n, seed, c);
  AddressablePermutation permutation(seed, n, c);
  const std::string where = "n " + std::to_string(n) + " seed " + std::to_string(seed) + " L " +
                            std::to_string(c.leaf_records) + " F " + std::to_string(c.max_fanout) + " levels " +
                            std::to_string(core::plan_levels(n, c));
  std::vector<std::uint64_t> all(n);
  permutation.positions(0, 1, all);
  ASSERT_EQ(all, order) << where;
  // Strides and offsets, as a rank of a distributed sampler reads them.
  for (const std::uint64_t step : {2ull, 3ull, 8ull}) {
    for (std::uint64_t first = 0; first < std::min<std::uint64_t>(step, n); ++first) {
      std::vector<std::uint64_t> strided((n - first + step - 1) / step);
      permutation.positions(first, step, strided);
      for (std::size_t k = 0; k < strided.size(); ++k) ASSERT_EQ(strided[k], order[first + k * step]) << where;
    }
  }
  for (std::uint64_t j = 0; j < n; ++j) ASSERT_EQ(permutation.position_of(order[j]), j) << where << " j " << j;
}

TEST(AddressablePermutation, MatchesTheOracleAtEveryLevelCount) {
  // Tiny constants give 1 to 10 levels; odd ones short last chunks and
  // uneven buckets; L = 256 chunks whose domain is exactly L.
  for (const core::PlanConstants c : {core::PlanConstants{4, 2}, core::PlanConstants{3, 3}, core::PlanConstants{7, 5},
                                      core::PlanConstants{16, 4}, core::PlanConstants{256, 8}}) {
    for (const std::uint64_t n : {1ull, 2ull, 3ull, 5ull, 17ull, 100ull, 1000ull, 4097ull}) {
      if (n > 1000 && c.leaf_records < 16) continue;
      for (const std::uint64_t seed : {1ull, 18446744073709551615ull}) expect_matches_oracle(n, seed, c);
    }
  }
}

TEST(AddressablePermutation, MatchesTheOracleWithTheShippedConstants) {
  // Two levels at L = 2^20: full chunks (domain exactly L) and a short last one.
  const std::uint64_t n = (std::uint64_t{1} << 21) + 12345;
  const std::vector<std::uint64_t> order = testing::oracle_order(n, 9, core::kPlanV2);
  AddressablePermutation permutation(9, n, core::kPlanV2);
  std::vector<std::uint64_t> block(100000);
  for (const std::uint64_t first : {std::uint64_t{0}, std::uint64_t{1048000}, n - 100000}) {
    permutation.positions(first, 1, block);
    for (std::size_t k = 0; k < block.size(); ++k) ASSERT_EQ(block[k], order[first + k]) << first + k;
  }
  for (std::uint64_t j = 0; j < n; j += 99991) ASSERT_EQ(permutation.position_of(order[j]), j);
  ASSERT_EQ(permutation.position_of(order[n - 1]), n - 1);
}

TEST(AddressablePermutation, ThreeLevelsOfTheShippedPlanInvertEachOther) {
  // N = 2^31 + 5: three levels with L = 2^20 and F = 2^10 (the CLI test in
  // tests/python checks the forward direction against `extshuffle -i`).
  const std::uint64_t n = (std::uint64_t{1} << 31) + 5;
  ASSERT_EQ(core::plan_levels(n, core::kPlanV2), 3u);
  AddressablePermutation permutation(3, n, core::kPlanV2);
  std::vector<std::uint64_t> block(1000);
  for (const std::uint64_t first : {std::uint64_t{0}, n / 2, n - 1000}) {
    permutation.positions(first, 1, block);
    for (std::size_t k = 0; k < block.size(); k += 97) {
      ASSERT_LT(block[k], n);
      ASSERT_EQ(permutation.position_of(block[k]), first + k);
    }
  }
}

TEST(AddressablePermutation, RefusesPositionsPastTheEnd) {
  AddressablePermutation permutation(1, 10, core::PlanConstants{4, 2});
  std::vector<std::uint64_t> out(3);
  EXPECT_THROW(permutation.positions(8, 1, out), std::out_of_range);
  EXPECT_THROW(permutation.positions(0, 5, out), std::out_of_range);
  EXPECT_NO_THROW(permutation.positions(1, 4, out));
  EXPECT_THROW(permutation.position_of(10), std::out_of_range);
  EXPECT_THROW(AddressablePermutation(1, 10, core::PlanConstants{0, 2}), std::invalid_argument);
}

TEST(AddressablePermutation, EveryColumnPathMatchesTheOracle) {
  // Nodes of rows x p above kKeptMatrixEntries: a bucket's column comes
  // from the walk (positions read in order, forwards and backwards) or from
  // a descent (a few positions anywhere); 8192 rows are walked by subtrees
  // on several threads.
  for (const auto& [n, c] : {std::pair{std::uint64_t{8192}, core::PlanConstants{4, 128}},
                             std::pair{std::uint64_t{16384}, core::PlanConstants{2, 64}},
                             std::pair{std::uint64_t{20011}, core::PlanConstants{3, 100}}}) {
    const std::uint64_t rows = core::chunk_count(n, c);
    ASSERT_GT(rows * core::bucket_count(n, c), AddressablePermutation::kKeptMatrixEntries);
    const std::vector<std::uint64_t> order = testing::oracle_order(n, 5, c);
    for (const int threads : {1, 3}) {
      AddressablePermutation permutation(5, n, c);
      const EvaluationOptions options{threads, {}};
      std::vector<std::uint64_t> all(n);
      permutation.positions(0, 1, all, options);
      ASSERT_EQ(all, order) << n;
      std::vector<std::uint64_t> strided((n + 6) / 7);
      permutation.positions(0, 7, strided, options);  // the walk goes back to column 0
      for (std::size_t k = 0; k < strided.size(); ++k) ASSERT_EQ(strided[k], order[k * 7]) << n;
      std::mt19937_64 random(n);
      for (int trial = 0; trial < 200; ++trial) {
        const std::uint64_t j = random() % n;
        ASSERT_EQ(permutation.at(j, options), order[j]) << n << " at " << j;
      }
      std::vector<std::uint64_t> scattered(300);
      for (std::uint64_t& v : scattered) v = random() % n;
      std::sort(scattered.begin(), scattered.end());
      std::vector<std::uint64_t> records = scattered;
      permutation.records_at(records, options);
      for (std::size_t k = 0; k < records.size(); ++k) ASSERT_EQ(records[k], order[scattered[k]]);
    }
  }
}

TEST(AddressablePermutation, InterruptedCallsLeaveItWhole) {
  const std::uint64_t n = 16384;
  const core::PlanConstants c{2, 64};
  const std::vector<std::uint64_t> order = testing::oracle_order(n, 8, c);
  AddressablePermutation permutation(8, n, c);
  int asked = 0;
  for (const int stop_at : {1, 2, 5, 12}) {
    std::vector<std::uint64_t> out(n);
    asked = 0;
    const EvaluationOptions stopping{2, [&] { return ++asked >= stop_at; }};
    EXPECT_THROW(permutation.positions(0, 1, out, stopping), Interrupted) << stop_at;
    EXPECT_EQ(asked, stop_at);
    permutation.positions(0, 1, out);
    ASSERT_EQ(out, order) << "after an interrupt at check " << stop_at;
  }
  std::vector<std::uint64_t> descending{3, 2};
  EXPECT_THROW(permutation.records_at(descending), std::out_of_range);
}

TEST(MatrixColumnWalk, EveryColumnIsTheMatrixColumn) {
  for (const auto& [n, c] : {std::pair{std::uint64_t{1000}, core::PlanConstants{7, 33}},
                             std::pair{std::uint64_t{40000}, core::PlanConstants{5, 16}}}) {
    const core::Node node{core::NodeId{0, 0}, n};
    core::RecursiveMatrix matrix(3, node.id, n, c);
    const std::uint64_t rows = matrix.row_count(), p = matrix.bucket_count();
    std::vector<std::uint64_t> entries(rows * p);
    matrix.rows(0, rows, entries);
    MatrixColumnWalk walk(3, node, c);
    for (const std::uint64_t b : {std::uint64_t{0}, std::uint64_t{1}, p / 2, p - 1, std::uint64_t{2}}) {
      walk.walk_to(b, 2, {});
      ASSERT_EQ(walk.column(), b);
      for (std::uint64_t i = 0; i < rows; ++i) {
        std::uint64_t before = 0;
        for (std::uint64_t j = 0; j < b; ++j) before += entries[i * p + j];
        ASSERT_EQ(walk.before()[i], before) << "row " << i << " bucket " << b;
        ASSERT_EQ(walk.count()[i], entries[i * p + b]) << "row " << i << " bucket " << b;
      }
      // The descent to a few positions of the bucket agrees with the column.
      std::vector<std::uint64_t> queries, chunk(5), place(5);
      const std::uint64_t bucket = core::bucket_records(n, p, b);
      for (std::uint64_t q = 0; q < 5; ++q) queries.push_back(q * bucket / 5);
      locate_in_bucket(3, node, c, b, queries, chunk, place, {});
      for (std::size_t q = 0; q < queries.size(); ++q) {
        std::uint64_t start = 0, i = 0;
        while (start + walk.count()[i] <= queries[q]) start += walk.count()[i++];
        ASSERT_EQ(chunk[q], i);
        ASSERT_EQ(place[q], walk.before()[i] + queries[q] - start);
      }
    }
  }
}

TEST(ShuffleCompaction, HolesAndOrderAgree) {
  // m just below the domain (holes) and just above half of it (the order).
  for (const std::uint64_t m : {std::uint64_t{1000}, std::uint64_t{1020}, std::uint64_t{513}, std::uint64_t{700}}) {
    const core::VariablePhilox f(10, core::Stream(4, core::StreamAddress{}));
    const std::vector<std::uint64_t> identity = [&] {
      std::vector<std::uint64_t> v(m);
      std::iota(v.begin(), v.end(), 0);
      return v;
    }();
    const std::vector<std::uint64_t> expected = testing::bijective_shuffle(identity, f);
    const ShuffleCompaction compaction(f, m);
    EXPECT_EQ(ShuffleCompaction::builds_holes(m, 1024), m >= 960) << m;
    std::vector<std::uint64_t> values = identity;
    std::reverse(values.begin(), values.end());
    compaction.records(f, values);
    for (std::uint64_t k = 0; k < m; ++k) ASSERT_EQ(values[m - 1 - k], expected[k]) << m;
    for (std::uint64_t k = 0; k < m; k += 37) {
      ASSERT_EQ(compaction.output_of(f, core::variable_philox_inverse(f, expected[k])), k) << m;
    }
  }
}

TEST(VariablePhiloxBatch, EvaluatesAtAnyPoints) {
  for (const std::uint32_t bits : {8u, 17u, 20u, 33u}) {
    const core::VariablePhilox f(bits, core::Stream(11, core::StreamAddress{}));
    std::vector<std::uint64_t> points(device::cpu::kPhiloxBatch);
    for (std::size_t j = 0; j < points.size(); ++j) points[j] = (j * 0x9E3779B97F4A7C15ull) & (f.domain_size() - 1);
    for (const std::uint32_t count : {1u, 7u, 100u, device::cpu::kPhiloxBatch}) {
      std::vector<std::uint64_t> values(points.begin(), points.begin() + count);
      device::cpu::evaluate_variable_philox_at(f, values.data(), count, values.data());  // in place
      for (std::uint32_t j = 0; j < count; ++j) ASSERT_EQ(values[j], f(points[j])) << bits << " " << j;
    }
  }
}

TEST(VariablePhiloxInverse, InvertsEveryWidth) {
  for (std::uint32_t bits = core::kMinDomainBits; bits <= 40; bits += 3) {
    const core::VariablePhilox f(bits, core::Stream(7, core::StreamAddress{}));
    for (std::uint64_t x = 0; x < 1000; ++x) {
      const std::uint64_t value = (x * 0x9E3779B97F4A7C15ull) & (f.domain_size() - 1);
      ASSERT_EQ(core::variable_philox_inverse(f, f(value)), value) << bits;
    }
  }
}

}  // namespace
}  // namespace extshuffle::modes::addressable_permutation_test
