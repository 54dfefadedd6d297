// Whole nodes on the GPU (node_on_device.hpp) against the independent plan
// oracle (tests/support/plan_oracle.hpp), byte for byte: small plan
// constants so that 2 to 4 levels run on the device, many record sizes,
// the default staging and a tiny one (so that every copy wraps the pinned
// ring many times and every step needs several launches), the streamed
// input and output callbacks, and the index order used for text records.
// Skips where no GPU is usable. Deterministic comparisons: false-failure
// rate 0.
#include <gtest/gtest.h>

#include <cstring>
#include <stdexcept>
#include <vector>

#include "device/staging.hpp"
#include "extshuffle/device/device_error.hpp"
#include "extshuffle/device/node_on_device.hpp"
#include "support/permutations.hpp"
#include "support/plan_oracle.hpp"

namespace extshuffle::device::cuda_node_test {
namespace {

#define EXTSHUFFLE_SKIP_WITHOUT_CUDA() \
  if (!cuda_available()) GTEST_SKIP() << "no usable CUDA device: " << cuda_unavailable_reason()

using testing::tiny_staging;
using testing::with_staging;

void expect_node_matches_oracle(std::uint64_t n, std::size_t r, const core::PlanConstants& c, std::uint64_t seed) {
  const auto input = testing::numbered_records(n, r);
  std::vector<std::byte> output(input.size());
  std::vector<std::byte> emitted;
  std::uint64_t awaited = 0;
  NodeOnDeviceOptions options;
  options.await_input = [&](std::uint64_t records) {
    EXPECT_GE(records, awaited) << "input awaited in order";
    EXPECT_LE(records, n);
    awaited = records;
  };
  options.emit = [&](const std::byte* data, std::size_t bytes) {
    EXPECT_EQ(data, output.data() + emitted.size()) << "pieces in order";
    emitted.insert(emitted.end(), data, data + bytes);
  };
  shuffle_node_on_device(core::Node{{0, 0}, n}, seed, c, input.data(), output.data(), r, options);
  const auto expected = testing::oracle_shuffle(input, r, seed, c);
  EXPECT_TRUE(output == expected) << "n " << n << ", record size " << r << ", L " << c.leaf_records;
  EXPECT_TRUE(emitted == expected) << "emitted pieces, n " << n;
  if (n > 0) {
    EXPECT_EQ(awaited, n);
  }
}

void node_cases() {
  for (const core::PlanConstants c : {core::PlanConstants{16, 4}, core::PlanConstants{256, 8}, core::PlanConstants{7, 3}}) {
    for (std::size_t r : {1ul, 4ul, 8ul, 12ul, 16ul, 33ul, 100ul}) {
      for (std::uint64_t n : {0ull, 1ull, 5ull, 16ull, 17ull, 257ull, 4097ull, 30011ull}) {
        expect_node_matches_oracle(n, r, c, 3 + n);
      }
    }
  }
}

TEST(CudaNode, SmallPlansMatchTheOracle) {
  EXTSHUFFLE_SKIP_WITHOUT_CUDA();
  node_cases();
}

TEST(CudaNode, TinyStagingMatchesTheOracle) {
  EXTSHUFFLE_SKIP_WITHOUT_CUDA();
  with_staging(tiny_staging(), [] { node_cases(); });
}

// The production constants: two levels of 2^20-record chunks and leaves.
TEST(CudaNode, ProductionConstantsMatchTheOracle) {
  EXTSHUFFLE_SKIP_WITHOUT_CUDA();
  expect_node_matches_oracle((std::uint64_t{1} << 22) + 5, 8, core::kPlanV2, 17);
}

TEST(CudaNode, IndexOrderMatchesTheOracle) {
  EXTSHUFFLE_SKIP_WITHOUT_CUDA();
  const core::PlanConstants c{16, 4};
  for (std::uint64_t n : {1ull, 100ull, 5000ull, 70001ull}) {
    std::vector<std::uint32_t> order(n);
    node_order_on_device(core::Node{{0, 0}, n}, 23, c, order.data());
    const auto expected = testing::oracle_order(n, 23, c);
    ASSERT_EQ(std::vector<std::uint64_t>(order.begin(), order.end()), expected) << "n " << n;
  }
}

// A node below the root uses its own streams (its id), not the root's.
TEST(CudaNode, InnerNodeMatchesTheOracle) {
  EXTSHUFFLE_SKIP_WITHOUT_CUDA();
  const core::PlanConstants c{16, 4};
  const core::Node root{{0, 0}, 5000};
  const core::Node child = core::bucket_node(root, core::bucket_count(5000, c), 1);
  const auto input = testing::numbered_records(child.records, 8);
  std::vector<std::byte> output(input.size());
  shuffle_node_on_device(child, 29, c, input.data(), output.data(), 8);
  std::vector<std::uint64_t> identity(child.records), order;
  for (std::uint64_t k = 0; k < child.records; ++k) identity[k] = k;
  testing::oracle_node(child, identity, 29, c, order);
  EXPECT_EQ(testing::record_indices(output, 8), order);
}

TEST(CudaNode, FitsAndRefusesByDeviceMemory) {
  EXTSHUFFLE_SKIP_WITHOUT_CUDA();
  EXPECT_TRUE(node_fits_on_device(1 << 20, 8));
  EXPECT_FALSE(node_fits_on_device(std::uint64_t{1} << 50, 8));
}

// An emit that throws: the error passes through, and the next call works.
TEST(CudaNode, ErrorsOfTheCallbacksPassThrough) {
  EXTSHUFFLE_SKIP_WITHOUT_CUDA();
  const core::PlanConstants c{16, 4};
  const auto input = testing::numbered_records(5000, 8);
  std::vector<std::byte> output(input.size());
  NodeOnDeviceOptions options;
  options.emit = [](const std::byte*, std::size_t) { throw std::runtime_error("emit failed"); };
  with_staging(tiny_staging(), [&] {
    EXPECT_THROW(shuffle_node_on_device(core::Node{{0, 0}, 5000}, 1, c, input.data(), output.data(), 8, options),
                 std::runtime_error);
    expect_node_matches_oracle(5000, 8, c, 1);
  });
}

}  // namespace
}  // namespace extshuffle::device::cuda_node_test
