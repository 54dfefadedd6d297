// The walk of a whole node (src/device/node_plan.cpp), run on the CPU
// through steps that do with host vectors what the CUDA back end does on the
// device, against the independent plan oracle (tests/support/plan_oracle.hpp)
// byte for byte, at 1 to 4 levels, with leaves and splits mixed on one level,
// and at every load/unload group size. Also: the order and coverage of the
// loads and unloads the device copies rely on, and the device entry points'
// behaviour without a GPU. Deterministic comparisons: false-failure rate 0.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "device/node_plan.hpp"
#include "extshuffle/device/device_error.hpp"
#include "extshuffle/device/node_on_device.hpp"
#include "extshuffle/device/shuffle_records.hpp"
#include "support/permutations.hpp"
#include "support/plan_oracle.hpp"

namespace extshuffle::device::node_plan_test {
namespace {

// A and B in host memory; shuffles on the CPU back end.
class HostNodeSteps final : public NodeSteps {
 public:
  HostNodeSteps(const std::vector<std::byte>& input, std::size_t record_size)
      : input_(input), r_(record_size), a_(input.size()), b_(input.size()) {}

  void load(std::uint64_t first, std::uint64_t end) override {
    EXPECT_EQ(first, loaded_) << "loads in order";
    EXPECT_LT(first, end);
    std::memcpy(a_.data() + first * r_, input_.data() + first * r_, (end - first) * r_);
    loaded_ = end;
  }
  void shuffle(std::span<const NodeShuffle> jobs) override {
    std::vector<ShuffleJob> host;
    for (const NodeShuffle& job : jobs) {
      EXPECT_LE((job.first + job.records) * r_, loaded_ * r_) << "a shuffle reads only loaded records";
      host.push_back({a_.data() + job.first * r_, b_.data() + job.first * r_, job.records, job.bijection});
    }
    shuffle_records(Device::kCpu, host, r_, 2);
    ++shuffles_;
  }
  void scatter(std::span<const NodeSlice> slices) override {
    for (const NodeSlice& s : slices) std::memcpy(a_.data() + s.to * r_, b_.data() + s.from * r_, s.records * r_);
    ++scatters_;
  }
  void unload(std::uint64_t first, std::uint64_t end) override {
    EXPECT_EQ(first * r_, output_.size()) << "unloads in order";
    EXPECT_LT(first, end);
    output_.insert(output_.end(), b_.begin() + static_cast<std::ptrdiff_t>(first * r_),
                   b_.begin() + static_cast<std::ptrdiff_t>(end * r_));
  }

  const std::vector<std::byte>& output() const { return output_; }
  std::uint64_t loaded() const { return loaded_; }
  int scatters() const { return scatters_; }

 private:
  const std::vector<std::byte>& input_;
  std::size_t r_;
  std::vector<std::byte> a_, b_, output_;
  std::uint64_t loaded_ = 0;
  int shuffles_ = 0;
  int scatters_ = 0;
};

// True when some level of the plan of n holds both a leaf and a split (sizes L and L + 1).
bool has_mixed_level(std::uint64_t n, const core::PlanConstants& c) {
  std::vector<std::uint64_t> level{n};
  while (!level.empty()) {
    bool leaf = false, split = false;
    std::vector<std::uint64_t> next;
    for (std::uint64_t m : level) {
      if (core::is_leaf(m, c)) {
        leaf = true;
        continue;
      }
      split = true;
      const std::uint64_t p = core::bucket_count(m, c);
      for (std::uint64_t j = 0; j < p; ++j) next.push_back(core::bucket_records(m, p, j));
    }
    if (leaf && split) return true;
    level = std::move(next);
  }
  return false;
}

void expect_walk_matches_oracle(std::uint64_t n, std::size_t r, const core::PlanConstants& c,
                                std::uint64_t group_records, std::uint64_t seed) {
  const auto input = testing::numbered_records(n, r);
  HostNodeSteps steps(input, r);
  walk_node_plan(core::Node{{0, 0}, n}, seed, c, group_records, 2, steps);
  EXPECT_EQ(steps.loaded(), n);
  ASSERT_EQ(steps.output().size(), input.size()) << "n " << n;
  EXPECT_TRUE(steps.output() == testing::oracle_shuffle(input, r, seed, c))
      << "n " << n << ", record size " << r << ", L " << c.leaf_records << ", F " << c.max_fanout << ", group "
      << group_records;
}

TEST(NodePlan, EveryLevelCountMatchesTheOracle) {
  const core::PlanConstants c{16, 4};
  for (std::uint64_t n : {0ull, 1ull, 2ull, 15ull, 16ull, 17ull, 63ull, 64ull, 65ull, 200ull, 1000ull, 4097ull}) {
    for (std::uint64_t group : {1ull, 7ull, 64ull, 1ull << 20}) expect_walk_matches_oracle(n, 8, c, group, 5);
  }
  EXPECT_GE(core::plan_levels(4097, c), 4u) << "the sizes must reach four levels and more";
}

TEST(NodePlan, RecordSizesAndConstantsMatchTheOracle) {
  for (const core::PlanConstants c : {core::PlanConstants{7, 3}, core::PlanConstants{256, 8}, core::PlanConstants{5, 2}}) {
    for (std::size_t r : {1ul, 3ul, 4ul, 12ul, 16ul, 100ul}) {
      for (std::uint64_t n : {9ull, 300ull, 3001ull}) expect_walk_matches_oracle(n, r, c, 50, 11 + r);
    }
  }
}

// Levels where leaves of L records sit beside splits of L + 1: the walk
// shuffles those leaves with the level's chunks and unloads them with the
// last level's groups.
TEST(NodePlan, LevelsMixingLeavesAndSplitsMatchTheOracle) {
  const core::PlanConstants c{8, 3};
  int mixed = 0;
  for (std::uint64_t n = 1; n <= 600; ++n) {
    if (!has_mixed_level(n, c)) continue;
    ++mixed;
    expect_walk_matches_oracle(n, 4, c, 10, n);
  }
  EXPECT_GT(mixed, 10) << "the range must reach the mixed case";
}

TEST(NodePlan, ScattersOncePerSplitLevel) {
  const core::PlanConstants c{16, 4};
  const auto input = testing::numbered_records(1000, 8);
  HostNodeSteps steps(input, 8);
  walk_node_plan(core::Node{{0, 0}, 1000}, 3, c, 64, 2, steps);
  EXPECT_EQ(steps.scatters(), static_cast<int>(core::plan_levels(1000, c)) - 1);
}

// A node below the root: its id addresses the streams, its records start at 0.
TEST(NodePlan, InnerNodesUseTheirOwnStreams) {
  const core::PlanConstants c{16, 4};
  const core::Node root{{0, 0}, 1000};
  const core::Node child = core::bucket_node(root, core::bucket_count(1000, c), 2);
  const auto input = testing::numbered_records(child.records, 8);
  HostNodeSteps steps(input, 8);
  walk_node_plan(child, 9, c, 32, 2, steps);
  std::vector<std::uint64_t> order;
  testing::oracle_node(child, [&] {
    std::vector<std::uint64_t> v(child.records);
    for (std::uint64_t k = 0; k < child.records; ++k) v[k] = k;
    return v;
  }(), 9, c, order);
  EXPECT_EQ(testing::record_indices(steps.output(), 8), order);
}

TEST(NodeOnDevice, WithoutAGpuNothingFitsAndRunsFail) {
  if (cuda_available()) GTEST_SKIP() << "a GPU is usable here";
  EXPECT_FALSE(node_fits_on_device(1000, 8));
  std::vector<std::byte> in(8000), out(8000);
  try {
    shuffle_node_on_device(core::Node{{0, 0}, 1000}, 1, core::kPlanV2, in.data(), out.data(), 8);
    FAIL() << "expected DeviceError";
  } catch (const DeviceError& e) {
    EXPECT_NE(std::string(e.what()).find("CUDA device requested: "), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
  }
  std::vector<std::uint32_t> order(10);
  EXPECT_THROW(node_order_on_device(core::Node{{0, 0}, 10}, 1, core::kPlanV2, order.data()), DeviceError);
}

}  // namespace
}  // namespace extshuffle::device::node_plan_test
