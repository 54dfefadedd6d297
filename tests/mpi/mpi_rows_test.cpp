// The matrix rows a rank draws: O(R/P + log R) splits, whatever its chunks.
// A rank draws the column sums of its chunks' rows before any exchange
// (distribution.cpp: the two boundary paths, at most 2 x depth splits), and
// its driver draws the rows of its chunks group by group, as ChunkRows does
// (the path to the first group and the inside, R/P - 1 + 2 x depth). The
// column sums it sends in the counts must be the sums of the very rows its
// driver later cuts its chunks by, or the receivers' buffers would be wrong.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "extshuffle/core/recursive_matrix.hpp"
#include "mpi/distribution.hpp"

namespace extshuffle::mpi {
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
  for (std::size_t r = 0; r + 1 < chunk_begin.size(); ++r) {
    const std::uint64_t first = chunk_begin[r], end = chunk_begin[r + 1];
    if (first == end) continue;
    core::RecursiveMatrix counts(42, core::NodeId{0, 0}, n, c);
    std::vector<std::uint64_t> column_sums(p, 0), row_sums(p, 0);
    counts.column_sums(first, end, column_sums);
    const std::uint64_t row_draws = draw_rows(n, c, first, end, 16, row_sums);
    EXPECT_EQ(column_sums, row_sums) << "rank " << r << " of " << chunk_begin.size() - 1 << ", R = " << chunks;
    EXPECT_LE(counts.splits_drawn(), 2 * depth);
    EXPECT_LE(counts.splits_drawn() + row_draws, (end - first) + 4 * depth)
        << "rank " << r << ": chunks [" << first << ", " << end << ") of " << chunks;
    all_draws += counts.splits_drawn() + row_draws;
  }
  // All ranks together: the R - 1 splits once, plus each rank's paths.
  EXPECT_LE(all_draws, chunks - 1 + 4 * depth * (chunk_begin.size() - 1));
}

TEST(MpiRows, EachRankDrawsItsShareAndTwoPaths) {
  const core::PlanConstants c{4, 64};
  for (const std::uint64_t n : {std::uint64_t{4000}, std::uint64_t{16389}, std::uint64_t{262147}}) {
    for (int ranks = 1; ranks <= 8; ++ranks) check_ranks(n, c, even_chunk_split(core::chunk_count(n, c), ranks));
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

}  // namespace
}  // namespace extshuffle::mpi
