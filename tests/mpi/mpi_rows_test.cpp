// The matrix rows a rank draws: O(R/P + log R) splits, whatever its chunks.
// A rank draws the column sums of its chunks' rows before any exchange
// (range_column_sums: the sums before its last chunk's end less those
// before its first chunk, two boundary paths, at most 2 x depth splits), and
// its driver draws the rows of its chunks group by group, as ChunkRows does
// (the path to the first group and the inside, R/P - 1 + 2 x depth). The
// column sums it sends in the counts must be the sums of the very rows its
// driver later cuts its chunks by, or the receivers' buffers would be wrong;
// and the ranks' sums together must be the bucket sizes. Deterministic:
// false-failure rate 0.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "extshuffle/core/recursive_matrix.hpp"
#include "mpi/distribution.hpp"

namespace extshuffle::mpi::mpi_rows_test {
namespace {

// Splits drawn for rows [first, end) in groups of `group` rows on a fresh
// matrix, as the driver's ChunkRows draws them; `sums` gets their column sums.
std::uint64_t draw_rows(std::uint64_t n, const core::PlanConstants& c, std::uint64_t first, std::uint64_t end,
                        std::uint64_t group, std::vector<std::uint64_t>& sums) {
  core::RecursiveMatrix matrix(42, core::NodeId{0, 0}, n, c);
  const std::uint64_t p = matrix.bucket_count();
  std::vector<std::uint64_t> rows;
  for (std::uint64_t i = first; i < end; i += group) {
    const std::uint64_t stop = std::min(end, i + group);
    rows.resize((stop - i) * p);
    matrix.rows(i, stop, rows);
    for (std::uint64_t k = 0; k < rows.size(); ++k) sums[k % p] += rows[k];
  }
  return matrix.splits_drawn();
}

void check_ranks(std::uint64_t n, const core::PlanConstants& c, const std::vector<std::uint64_t>& chunk_begin) {
  const std::uint64_t chunks = core::chunk_count(n, c), p = core::bucket_count(n, c);
  const std::uint64_t depth = core::row_tree_depth(chunks);
  std::uint64_t all_draws = 0;
  std::vector<std::uint64_t> all_ranks(p, 0);
  for (std::size_t r = 0; r + 1 < chunk_begin.size(); ++r) {
    const std::uint64_t first = chunk_begin[r], end = chunk_begin[r + 1];
    if (first == end) continue;
    core::RecursiveMatrix counts(42, core::NodeId{0, 0}, n, c);
    std::vector<std::uint64_t> column_sums(p, 0), row_sums(p, 0);
    range_column_sums(counts, first, end, column_sums);
    for (std::uint64_t j = 0; j < p; ++j) all_ranks[j] += column_sums[j];
    const std::uint64_t row_draws = draw_rows(n, c, first, end, 16, row_sums);
    EXPECT_EQ(column_sums, row_sums) << "rank " << r << " of " << chunk_begin.size() - 1 << ", R = " << chunks;
    EXPECT_LE(counts.splits_drawn(), 2 * depth);
    EXPECT_LE(counts.splits_drawn() + row_draws, (end - first) + 4 * depth)
        << "rank " << r << ": chunks [" << first << ", " << end << ") of " << chunks;
    all_draws += counts.splits_drawn() + row_draws;
  }
  // All ranks together: the R - 1 splits once, plus each rank's paths;
  // every record of the root sent once, to its bucket.
  EXPECT_LE(all_draws, chunks - 1 + 4 * depth * (chunk_begin.size() - 1));
  for (std::uint64_t j = 0; j < p; ++j) {
    EXPECT_EQ(all_ranks[j], core::bucket_records(n, p, j)) << "bucket " << j << " of " << p << ", R = " << chunks;
  }
}

TEST(MpiRows, EachRankDrawsItsShareAndTwoPaths) {
  const core::PlanConstants c{4, 64};
  for (const std::uint64_t n : {std::uint64_t{4000}, std::uint64_t{16389}, std::uint64_t{262147}}) {
    for (int ranks = 1; ranks <= 8; ++ranks) check_ranks(n, c, even_split(core::chunk_count(n, c), ranks));
  }
}

TEST(MpiRows, UnevenSplitsAsTextRecordsGiveThem) {
  // Text ranks scatter the chunks whose first record starts in their byte
  // range: any monotone split, empty ranges included.
  const core::PlanConstants c{4, 64};
  const std::uint64_t n = 40003, chunks = core::chunk_count(n, c);
  std::uint64_t x = 7;
  for (int trial = 0; trial < 50; ++trial) {
    const int ranks = 2 + trial % 7;
    std::vector<std::uint64_t> begin(ranks + 1, 0);
    for (int r = 1; r < ranks; ++r) {
      x = x * 6364136223846793005ULL + 1442695040888963407ULL;
      begin[r] = (x >> 33) % (chunks + 1);
    }
    begin[ranks] = chunks;
    std::sort(begin.begin(), begin.end());
    check_ranks(n, c, begin);
  }
}

TEST(MpiRows, RangeColumnSumsCheckTheirRange) {
  const core::PlanConstants c{2, 4};
  const std::uint64_t p = core::bucket_count(10, c);  // 5 chunks (rows)
  core::RecursiveMatrix matrix(1, core::NodeId{0, 0}, 10, c);
  std::vector<std::uint64_t> sums(p), bad(p + 1);
  EXPECT_THROW(range_column_sums(matrix, 0, 6, sums), std::out_of_range);
  EXPECT_THROW(range_column_sums(matrix, 0, 5, bad), std::invalid_argument);
  range_column_sums(matrix, 2, 2, sums);
  EXPECT_EQ(sums, std::vector<std::uint64_t>(p, 0));  // no rows, no records
}

// The records each rank holds: a spread root (a leaf, or two levels of
// fewer than 8 chunks a rank) in even shares N r / P (no overflow near
// 2^64), any other root by the chunks each rank scatters.
TEST(MpiRows, HeldRecordsAreEvenSharesOfASpreadRootAndTheChunksOfASplit) {
  const core::PlanConstants c{100, 4};
  EXPECT_EQ(held_record_split(10, c, 4), (std::vector<std::uint64_t>{0, 2, 5, 7, 10}));
  EXPECT_EQ(held_record_split(100, c, 3), (std::vector<std::uint64_t>{0, 33, 66, 100}));
  EXPECT_EQ(held_record_split(2, c, 3), (std::vector<std::uint64_t>{0, 0, 1, 2}));
  EXPECT_EQ(held_record_split(0, c, 2), (std::vector<std::uint64_t>{0, 0, 0}));
  // 250 records: 3 chunks of 100 (the last 50), 3 buckets of leaves: spread.
  EXPECT_EQ(held_record_split(250, c, 3), (std::vector<std::uint64_t>{0, 83, 166, 250}));
  EXPECT_EQ(held_record_split(250, c, 4), (std::vector<std::uint64_t>{0, 62, 125, 187, 250}));
  // 24 chunks of 10 (the last 5): on 3 ranks 8 a rank, split by chunks; on 4 spread.
  const core::PlanConstants wide{10, 64};
  EXPECT_EQ(held_record_split(235, wide, 3), (std::vector<std::uint64_t>{0, 80, 160, 235}));
  EXPECT_EQ(held_record_split(235, wide, 4), (std::vector<std::uint64_t>{0, 58, 117, 176, 235}));
  const core::PlanConstants huge{UINT64_MAX, 4};
  EXPECT_EQ(held_record_split(UINT64_MAX, huge, 2)[1], UINT64_MAX / 2);
}

// Which roots are spread: on one rank none; a leaf always; two levels
// below 8 chunks a rank; never three levels (here 5 buckets of 10 chunks
// each, F = 4 < 50 chunks).
TEST(MpiRows, SpreadRootsAreLeavesAndTwoLevelRootsOfFewChunks) {
  const core::PlanConstants c{10, 64};
  EXPECT_FALSE(spread_root(5, c, 1));
  EXPECT_FALSE(spread_root(200, c, 1));
  EXPECT_TRUE(spread_root(0, c, 2));
  EXPECT_TRUE(spread_root(10, c, 4));
  EXPECT_TRUE(spread_root(20, c, 4));    // 2 chunks on 4 ranks
  EXPECT_TRUE(spread_root(90, c, 4));    // 9 on 4
  EXPECT_TRUE(spread_root(301, c, 4));   // 31 on 4, the last of one record
  EXPECT_FALSE(spread_root(311, c, 4));  // 32 on 4: 8 a rank
  EXPECT_FALSE(spread_root(321, c, 4));  // 33 on 4
  EXPECT_FALSE(spread_root(500, core::PlanConstants{10, 4}, 64));
}

}  // namespace
}  // namespace extshuffle::mpi::mpi_rows_test
