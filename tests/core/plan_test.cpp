#include "extshuffle/core/plan.hpp"

#include <gtest/gtest.h>

namespace extshuffle::core::plan_test {
namespace {

TEST(Plan, BucketsPartitionTheNode) {
  const PlanConstants c{16, 4};
  for (std::uint64_t n : {17ull, 64ull, 65ull, 1000ull, 123457ull}) {
    const std::uint64_t p = bucket_count(n, c);
    std::uint64_t total = 0;
    for (std::uint64_t j = 0; j < p; ++j) {
      EXPECT_EQ(bucket_first(n, p, j), total);
      total += bucket_records(n, p, j);
      // near-equal: sizes differ by at most one, larger ones first
      EXPECT_LE(bucket_records(n, p, j), bucket_records(n, p, 0));
      EXPECT_GE(bucket_records(n, p, j) + 1, bucket_records(n, p, 0));
    }
    EXPECT_EQ(total, n);
  }
}

TEST(Plan, FanoutIsCappedAndChunksCoverTheNode) {
  const PlanConstants c{16, 4};
  EXPECT_EQ(bucket_count(33, c), 3u);  // ceil(33/16) = 3 < F
  EXPECT_EQ(bucket_count(1000, c), 4u);
  EXPECT_EQ(chunk_count(33, c), 3u);
  EXPECT_EQ(chunk_records(33, 2, c), 1u);
  EXPECT_EQ(chunk_records(33, 1, c), 16u);
}

TEST(Plan, LevelsFollowTheConstants) {
  const PlanConstants c{16, 4};
  EXPECT_EQ(plan_levels(0, c), 1u);
  EXPECT_EQ(plan_levels(16, c), 1u);
  EXPECT_EQ(plan_levels(17, c), 2u);
  EXPECT_EQ(plan_levels(64, c), 2u);
  EXPECT_EQ(plan_levels(65, c), 3u);
  EXPECT_EQ(plan_levels(1000, c), 4u);
  EXPECT_EQ(plan_levels(std::uint64_t{1} << 40, kPlanV2), plan_levels(std::uint64_t{1} << 40, kPlanV2));
}

TEST(Plan, BucketNodesAreNamedByOutputPosition) {
  const PlanConstants c{16, 4};
  const Node root{NodeId{0, 0}, 1000};
  const std::uint64_t p = bucket_count(1000, c);
  const Node third = bucket_node(root, p, 2);
  EXPECT_EQ(third.id.depth, 1u);
  EXPECT_EQ(third.id.first, 500u);
  EXPECT_EQ(third.records, 250u);
}

TEST(Plan, RejectsWhatVersionOneCannotAddress) {
  EXPECT_THROW(check_plan(10, PlanConstants{0, 4}), std::invalid_argument);
  EXPECT_THROW(check_plan(10, PlanConstants{4, 1}), std::invalid_argument);
  EXPECT_THROW(check_plan(std::uint64_t{1} << 57, kPlanV2), std::invalid_argument);
  EXPECT_NO_THROW(check_plan(std::uint64_t{1} << 47, kPlanV2));  // chunk index < 2^32 for L >= 2^15
}

}  // namespace
}  // namespace extshuffle::core::plan_test
