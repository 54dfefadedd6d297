// Golden hashes pinning permutation version 2 (docs/conventions.md, The contract; docs/design.md). If one of these
// fails, the permutation for some (seed, N) changed: that is a new
// permutation version and must be recorded in --version and docs, never an
// accident. The values also pin the C library's log/exp (glibc), which the
// hypergeometric sampler's accept/reject decisions depend on.
#include <gtest/gtest.h>

#include <vector>

#include "extshuffle/ioperm/reference_shuffle.hpp"
#include "support/permutations.hpp"
#include "support/plan_oracle.hpp"

namespace extshuffle::ioperm::golden_test {
namespace {

struct Golden {
  std::uint64_t records;
  std::uint64_t seed;
  std::uint64_t fnv1a;  // of the shuffled 8-byte records 0..N-1
  core::PlanConstants constants = core::kPlanV2;
};

// N = 1 and 1000 are one leaf; 2^20 + 3 and 5000000 split once (2 and 5
// buckets) with the shipped L = 2^20 and F = 2^10; three levels start above
// 2^30 records, too large for a unit test. The last two use small constants
// (as --leaf-records/--fanout do) to pin deep matrix trees (391 and 977 chunks,
// 9 and 10 levels of splits) through four and five plan levels.
constexpr Golden kGoldens[] = {
    {1000, 42, 0x550e13e5bda3be05ull},
    {1, 42, 0xa8c7f832281a39c5ull},
    {(1u << 20) + 3, 42, 0xf39bb5775644907eull},
    {(1u << 20) + 3, 18446744073709551615ull, 0xa88e50edfd98737eull},
    {5000000, 7, 0x3287c4d0b982f8c1ull},
    {100000, 3, 0xb8b6fd36bb083279ull, core::PlanConstants{256, 16}},
    {1000003, 11, 0xec76283135a95743ull, core::PlanConstants{1024, 8}},
};

TEST(Golden, PermutationVersionTwoIsPinned) {
  ASSERT_EQ(core::kPermutationVersion, 2);
  for (const Golden& g : kGoldens) {
    const auto input = testing::numbered_records(g.records, 8);
    std::vector<std::byte> output(input.size());
    shuffle_in_memory(input, output, 8, g.seed, ReferenceOptions{g.constants});
    EXPECT_EQ(testing::fnv1a(output), g.fnv1a)
        << std::hex << "N " << std::dec << g.records << " seed " << g.seed << ": got 0x" << std::hex
        << testing::fnv1a(output) << " (levels " << std::dec << core::plan_levels(g.records, g.constants) << ")";
  }
}

// The independent oracle (support/plan_oracle.hpp) gives the same hashes, so
// the oracle, the walk it checks and these values pin one another.
TEST(Golden, TheOracleGivesThePinnedHashes) {
  for (const Golden& g : kGoldens) {
    const auto input = testing::numbered_records(g.records, 8);
    EXPECT_EQ(testing::fnv1a(testing::oracle_shuffle(input, 8, g.seed, g.constants)), g.fnv1a)
        << "N " << g.records << " seed " << g.seed;
  }
}

}  // namespace
}  // namespace extshuffle::ioperm::golden_test
