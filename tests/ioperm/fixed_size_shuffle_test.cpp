#include "extshuffle/ioperm/fixed_size_shuffle.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iterator>
#include <vector>

#include "extshuffle/errors.hpp"
#include "extshuffle/io/block_file.hpp"
#include "support/permutations.hpp"
#include "support/plan_oracle.hpp"
#include "support/sanitized_cases.hpp"
#include "support/walk_options.hpp"

namespace extshuffle::ioperm::fixed_size_shuffle_test {
namespace {

using core::PlanConstants;

struct Outcome {
  std::vector<std::byte> output;
  WalkStats stats;
};

Outcome run_external(const std::vector<std::byte>& input, std::size_t record_size, std::uint64_t seed,
                     const PlanConstants& c, std::uint64_t memory_bytes, int threads = 2,
                     io::BlockFile* scratch_file = nullptr, std::uint64_t head_count = UINT64_MAX) {
  auto source = io::BlockFile::in_memory();
  source->write_now(input.data(), 0, input.size());
  auto memory_scratch = io::BlockFile::in_memory();
  io::BlockFile& scratch = scratch_file ? *scratch_file : *memory_scratch;
  Outcome outcome;
  // The output's size reserved: grown by doubling, a run's output (up to
  // 64 MiB here) was copied again and faulted in anew at every step.
  outcome.output.reserve(std::min<std::uint64_t>(head_count, input.size() / record_size) * record_size);
  WalkOptions options = testing::walk_options(record_size, seed, c, memory_bytes, threads);
  options.output_records = head_count;
  outcome.stats = shuffle_fixed_size(*source, 0, input.size() / record_size, scratch, 0, options,
                                   [&](const std::byte* data, std::size_t n) {
                                     outcome.output.insert(outcome.output.end(), data, data + n);
                                   });
  return outcome;
}

// What the plan says the output is: the independent oracle (support/plan_oracle.hpp).
std::vector<std::byte> run_reference(const std::vector<std::byte>& input, std::size_t record_size,
                                     std::uint64_t seed, const PlanConstants& c) {
  return testing::oracle_shuffle(input, record_size, seed, c);
}

// Byte for byte against the reference, for the grid of N and record
// sizes, with budgets that put 0 to 3 levels of the plan on disk.
TEST(ExternalExecutor, MatchesReferenceAcrossSizesAndBudgets) {
  const PlanConstants c{64, 4};
  for (std::uint64_t n : {0ull, 1ull, 2ull, 3ull, 5ull, 1000ull}) {
    for (std::size_t r : {1ul, 8ul, 12ul, 4096ul}) {
      const auto input = testing::numbered_records(n, r);
      const auto expected = run_reference(input, r, 42, c);
      for (std::uint64_t memory : {minimum_memory_bytes(c, r, n), std::uint64_t{64} << 10, std::uint64_t{16} << 20}) {
        const Outcome out = run_external(input, r, 42, c, memory);
        ASSERT_EQ(out.output, expected) << "n " << n << " r " << r << " memory " << memory;
      }
    }
  }
}

TEST(ExternalExecutor, OneTwoAndThreeDiskLevelsGiveTheSameBytes) {
  const PlanConstants c{64, 4};
  // 2 MiB of records, not a multiple of the fanout's powers: every level
  // has uneven nodes, and each budget below puts one more level on disk.
  const std::uint64_t n = (1ull << 18) + 3;
  const auto input = testing::numbered_records(n, 8);
  const auto expected = run_reference(input, 8, 7, c);
  // Node sizes are n R / 4^d bytes; a node streams when it exceeds memory / 2.
  const std::pair<std::uint64_t, std::uint32_t> cases[] = {{std::uint64_t{8} << 20, 1},
                                                           {std::uint64_t{2} << 20, 2},
                                                           {std::uint64_t{512} << 10, 3},
                                                           {std::uint64_t{128} << 10, 4}};
  for (const auto& [memory, passes] : cases) {
    const Outcome out = run_external(input, 8, 7, c, memory);
    EXPECT_EQ(out.stats.passes, passes) << memory;
    ASSERT_EQ(out.output, expected) << "memory " << memory;
  }
}

// -n K: exactly the first K records of the full permutation, at every
// number of disk levels, writing to scratch only the buckets that reach them.
// Under the sanitizers (support/sanitized_cases.hpp) each budget takes the
// cheap counts (none, within the first leaf, across leaves) and one of the
// three that cost a whole run (past a quarter, the last record cut, past
// the end), each at one budget: every cut still reached, 15 runs of 27.
TEST(ExternalExecutor, HeadCountIsThePrefixOfTheFullShuffle) {
  const PlanConstants c{64, 4};
  const std::uint64_t n = 50003;  // 6 levels of the plan
  const auto input = testing::numbered_records(n, 8);
  const auto full = run_reference(input, 8, 5, c);
  const std::uint64_t budgets[] = {std::uint64_t{8} << 20, std::uint64_t{64} << 10, std::uint64_t{16} << 10};
  const std::uint64_t costly_under_sanitizers[] = {n + 9, 12501, n - 1};
  std::uint32_t passes_before = 0;
  for (std::size_t b = 0; b < std::size(budgets); ++b) {
    const std::uint64_t memory = budgets[b];
    const Outcome whole = run_external(input, 8, 5, c, memory);
    EXPECT_GT(whole.stats.passes, passes_before) << "each budget puts more levels on disk: " << memory;
    passes_before = whole.stats.passes;
    for (std::uint64_t k :
         testing::thinned_under_sanitizers(std::vector<std::uint64_t>{0, 1, 63, 1000, 12501, n - 1, n, n + 9},
                                           std::vector<std::uint64_t>{0, 63, 1000, costly_under_sanitizers[b]})) {
      const Outcome head = run_external(input, 8, 5, c, memory, 2, nullptr, k);
      const std::size_t bytes = std::min(k, n) * 8;
      ASSERT_EQ(head.output.size(), bytes) << "k " << k << " memory " << memory;
      ASSERT_TRUE(std::equal(head.output.begin(), head.output.end(), full.begin())) << "k " << k << " memory " << memory;
      if (k < n / 4 && whole.stats.passes > 1) {
        EXPECT_LT(head.stats.bytes_written, whole.stats.bytes_written / 2) << "k " << k << " memory " << memory;
      }
    }
  }
}

// 4 KiB records: at 1 MiB a chunk fits once beside its index permutation
// (the split gathers its slices through it); at the smallest budget no
// chunk fits and records are routed one by one. The same bytes either way.
TEST(ExternalExecutor, LargeRecordsInMemoryChunksAndRouted) {
  const PlanConstants c{64, 4};
  const auto input = testing::numbered_records(1000, 4096);
  const auto expected = run_reference(input, 4096, 9, c);
  const Outcome indexed = run_external(input, 4096, 9, c, std::uint64_t{1} << 20);
  EXPECT_GT(indexed.stats.nodes_on_disk, 0u);
  EXPECT_EQ(indexed.stats.nodes_routed, 0u);
  EXPECT_EQ(indexed.output, expected);
  const Outcome routed = run_external(input, 4096, 9, c, minimum_memory_bytes(c, 4096, 1000));
  EXPECT_GT(routed.stats.nodes_routed, 0u);
  EXPECT_EQ(routed.output, expected);
}

// Records whose chunk of L = 2^20 is larger than a shuffled chunk may be
// (8 MiB), in RAM: a split is read chunk by chunk and moved by index, with
// two chunk buffers where they fit in what a node held once may use beside
// its records (48 MiB here), else one. The arena the schedule predicts is
// that way's: the records, one chunk's permutation (4 MiB) and staging (a
// 16th of a chunk), and the chunk buffers. The oracle's bytes on 1 and 2
// threads, and the schedule's IO.
TEST(ExternalExecutor, SplitsOfLargeChunksReadChunkByChunkInRam) {
  const std::uint64_t n = (std::uint64_t{1} << 21) + 5;  // three chunks, two leaves
  for (const std::size_t r : {std::size_t{16}, std::size_t{32}}) {
    const std::uint64_t chunk_bytes = (std::uint64_t{1} << 20) * r;
    const std::uint64_t buffers = r == 16 ? 2 : 1;  // 5 + 32 MiB fit beside 32 MiB; 6 + 64 do not beside 64
    const std::uint64_t expected_arena =
        (n * r + 63) / 64 * 64 + (std::uint64_t{4} << 20) + chunk_bytes / 16 + buffers * chunk_bytes;
    const std::uint64_t memory = 4 * n * r;
    const auto input = testing::numbered_records(n, r);
    const auto expected = run_reference(input, r, 3, core::kPlanV2);
    const Schedule s = plan_schedule(n, testing::walk_options(r, 3, core::kPlanV2, memory, 2));
    EXPECT_EQ(s.peak_memory_bytes, expected_arena) << "r " << r;
    for (const int threads : {1, 2}) {
      const Outcome out = run_external(input, r, 3, core::kPlanV2, memory, threads);
      EXPECT_EQ(out.stats.passes, 1u);
      EXPECT_EQ(out.stats.nodes_in_memory, 1u);
      EXPECT_EQ(out.stats.bytes_read, n * r);
      EXPECT_TRUE(out.output == expected) << "r " << r << " threads " << threads;
    }
    // A head count ends within the second leaf: the prefix, nothing more.
    const std::uint64_t head = (std::uint64_t{3} << 19) + 7;
    const Outcome first = run_external(input, r, 3, core::kPlanV2, memory, 2, nullptr, head);
    EXPECT_TRUE(first.output.size() == head * r &&
                std::equal(first.output.begin(), first.output.end(), expected.begin()))
        << "r " << r << " head " << head;
  }
}

TEST(ExternalExecutor, IdenticalForOneAndTwoThreads) {
  const PlanConstants c{256, 8};
  const auto input = testing::numbered_records(200000, 12);
  EXPECT_EQ(run_external(input, 12, 5, c, std::uint64_t{256} << 10, 1).output,
            run_external(input, 12, 5, c, std::uint64_t{256} << 10, 2).output);
}

TEST(ExternalExecutor, ShippedConstantsThroughARealScratchFile) {
  const std::uint64_t n = (1ull << 22) + 3;
  const auto input = testing::numbered_records(n, 8);
  const auto dir = std::filesystem::temp_directory_path() / ("extshuffle-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  {
    auto scratch = io::BlockFile::create_scratch(dir.string());
    // The scratch file is unlinked as soon as it is open: nothing to leave behind.
    EXPECT_TRUE(std::filesystem::is_empty(dir));
    const Outcome out = run_external(input, 8, 1, core::kPlanV2, std::uint64_t{16} << 20, 2, scratch.get());
    EXPECT_EQ(out.stats.passes, 2u);
    EXPECT_EQ(out.output, run_reference(input, 8, 1, core::kPlanV2));
  }
  EXPECT_TRUE(std::filesystem::is_empty(dir));
  std::filesystem::remove_all(dir);
}

TEST(ExternalExecutor, ScheduleMatchesWhatRuns) {
  const PlanConstants c{64, 4};
  const std::uint64_t n = (1ull << 20) + 3;
  WalkOptions options = testing::walk_options(8, 1, c, std::uint64_t{2} << 20, 2);
  const Schedule s = plan_schedule(n, options);
  const Outcome out = run_external(testing::numbered_records(n, 8), 8, 1, c, options.run.memory_bytes);
  EXPECT_EQ(s.passes, out.stats.passes);
  EXPECT_EQ(s.nodes_on_disk, out.stats.nodes_on_disk);
  EXPECT_EQ(s.bytes_read, out.stats.bytes_read);
  EXPECT_EQ(s.bytes_written, out.stats.bytes_written);
}

TEST(ExternalExecutor, ScheduleOfALeafLargerThanMemory) {
  const WalkOptions options = testing::walk_options(4096, 1, core::kPlanV2, std::uint64_t{16} << 20, 1);
  const Schedule s = plan_schedule(32768, options);  // 128 MiB in one leaf
  EXPECT_EQ(s.nodes_in_windows, 1u);
  EXPECT_EQ(s.passes, 2u);
  EXPECT_EQ(s.nodes_on_disk, 0u);
}

TEST(ExternalExecutor, RejectsABudgetBelowTheMinimum) {
  const std::uint64_t n = std::uint64_t{1} << 24;
  const std::uint64_t minimum = minimum_memory_bytes(core::kPlanV2, 8, n);
  EXPECT_THROW(plan_schedule(n, testing::walk_options(8, 1, core::kPlanV2, minimum - 4096, 1)), BudgetError);
  EXPECT_NO_THROW(plan_schedule(n, testing::walk_options(8, 1, core::kPlanV2, minimum, 1)));
  // An input that fits in the budget runs in RAM, whatever the minimum for streaming.
  EXPECT_NO_THROW(plan_schedule(10, testing::walk_options(8, 1, core::kPlanV2, 1024, 1)));
}

}  // namespace
}  // namespace extshuffle::ioperm::fixed_size_shuffle_test
