// The walk's door to the matrix (src/ioperm/matrix_rows.hpp): the rows it
// hands out do not depend on threads or on how chunks are grouped.
#include "ioperm/matrix_rows.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace extshuffle::ioperm::matrix_rows_test {
namespace {

std::vector<std::uint64_t> whole_matrix(std::uint64_t seed, const core::Node& node, const core::PlanConstants& c) {
  core::RecursiveMatrix matrix(seed, node.id, node.records, c);
  std::vector<std::uint64_t> rows(matrix.row_count() * matrix.bucket_count());
  matrix.rows(0, matrix.row_count(), rows);
  return rows;
}

TEST(MatrixRows, SampleMatrixIsTheSameOnAnyNumberOfThreads) {
  for (const auto& [n, c] : {std::pair<std::uint64_t, core::PlanConstants>{37, {4, 3}}, {100003, {64, 16}},
                             {1000000, {100, 32}}, {1, {1, 2}}}) {
    const core::Node node{core::NodeId{1, 77}, n};
    const auto expected = whole_matrix(9, node, c);
    for (const int threads : {1, 2, 3, 8}) {
      EXPECT_EQ(sample_matrix(9, node, c, threads), expected) << "n " << n << " threads " << threads;
    }
  }
}

TEST(MatrixRows, ChunkGroupsOfAnySizeGiveTheWholeMatrix) {
  const core::PlanConstants c{100, 32};
  const core::Node node{core::NodeId{0, 0}, 1000000};
  const auto expected = whole_matrix(4, node, c);
  for (const std::uint64_t group : {1u, 7u, 16u, 10000u}) {
    ChunkRows rows(4, node, c);
    std::vector<std::uint64_t> all, part;
    for (std::uint64_t first = 0; first < 10000; first += group) {
      rows.draw(first, std::min<std::uint64_t>(10000, first + group), part);
      all.insert(all.end(), part.begin(), part.end());
    }
    EXPECT_EQ(all, expected) << "groups of " << group;
  }
}

}  // namespace
}  // namespace extshuffle::ioperm::matrix_rows_test
