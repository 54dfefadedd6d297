#include <gtest/gtest.h>

#include <type_traits>
#include <vector>

#include "extshuffle/device/device_error.hpp"
#include "extshuffle/device/shuffle_records.hpp"
#include "support/permutations.hpp"
#include "support/statistics.hpp"

namespace extshuffle::device::bijective_shuffle_test {
namespace {

using core::NodeId;
using core::Purpose;
using core::StreamAddress;

std::vector<std::byte> shuffle_numbered(std::uint64_t n, std::size_t record_size,
                                        std::uint64_t seed, std::uint64_t index, int threads) {
  const auto input = testing::numbered_records(n, record_size);
  std::vector<std::byte> output(input.size());
  const ShuffleJob job{input.data(), output.data(), n,
                       core::shuffle_bijection(seed, StreamAddress{NodeId{0, 0}, Purpose::kLab, index}, n)};
  shuffle_records(Device::kCpu, job, record_size, threads);
  return output;
}

TEST(BijectiveShuffle, OutputIsAPermutationForManySizes) {
  for (std::uint64_t n : {0ull, 1ull, 2ull, 3ull, 15ull, 16ull, 17ull, 1000ull, 65536ull, 65537ull}) {
    for (std::size_t record_size : {1ul, 8ul, 12ul, 16ul, 4096ul}) {
      if (record_size == 1 && n > 256) continue;  // indices must fit the record
      if (record_size == 4096 && n > 1000) continue;
      const auto out = shuffle_numbered(n, record_size, 99, n, 1);
      const auto expected = testing::numbered_records(n, record_size);
      const auto indices = testing::record_indices(out, record_size);
      ASSERT_TRUE(testing::is_permutation_of_iota(indices)) << n << " x " << record_size;
      for (std::uint64_t k = 0; k < n; ++k) {  // whole records move, not just their first bytes
        ASSERT_EQ(0, std::memcmp(out.data() + k * record_size,
                                 expected.data() + indices[k] * record_size, record_size));
      }
    }
  }
}

// Thread count never changes the result: small jobs and jobs large enough to
// be split across threads (kParallelJobRecords is 2^18).
TEST(BijectiveShuffle, IdenticalForOneAndTwoThreads) {
  for (std::uint64_t n : {1000ull, (1ull << 20) + 3, 1ull << 20}) {
    for (std::size_t record_size : {8ul, 12ul}) {
      EXPECT_EQ(shuffle_numbered(n, record_size, 5, 1, 1), shuffle_numbered(n, record_size, 5, 1, 2))
          << n << " x " << record_size;
    }
  }
}

// A batch of jobs gives the same bytes as the jobs run one by one.
TEST(BijectiveShuffle, BatchEqualsSingleJobs) {
  const std::size_t record_size = 8;
  std::vector<std::vector<std::byte>> inputs, outputs, singles;
  std::vector<ShuffleJob> jobs;
  for (std::uint64_t k = 0; k < 9; ++k) {
    const std::uint64_t n = 100 * k + 7;
    inputs.push_back(testing::numbered_records(n, record_size));
    outputs.emplace_back(inputs.back().size());
    singles.push_back(shuffle_numbered(n, record_size, 11, k, 1));
  }
  for (std::uint64_t k = 0; k < 9; ++k) {
    const std::uint64_t n = 100 * k + 7;
    jobs.push_back({inputs[k].data(), outputs[k].data(), n,
                    core::shuffle_bijection(11, StreamAddress{NodeId{0, 0}, Purpose::kLab, k}, n)});
  }
  shuffle_records(Device::kCpu, jobs, record_size, 2);
  for (std::uint64_t k = 0; k < 9; ++k) EXPECT_EQ(outputs[k], singles[k]) << k;
}

// Chi-square over all 120 orders of 5 records, 240000 shuffles (2000 per cell).
// Threshold p < 1e-6: false-failure rate 1e-6.
TEST(BijectiveShuffle, AllOrdersOfFiveAreEquallyLikely) {
  constexpr std::uint64_t kShuffles = 240000;
  std::vector<std::uint64_t> counts(120, 0);
  const auto input = testing::numbered_records(5, 8);
  std::vector<std::byte> output(input.size());
  for (std::uint64_t t = 0; t < kShuffles; ++t) {
    const ShuffleJob job{input.data(), output.data(), 5,
                         core::shuffle_bijection(2024, StreamAddress{NodeId{0, 0}, Purpose::kLab, t}, 5)};
    shuffle_records(Device::kCpu, job, 8, 1);
    ++counts[testing::permutation_rank(testing::record_indices(output, 8))];
  }
  const double stat = testing::chi_square_statistic(counts, std::vector<double>(120, 1.0 / 120));
  EXPECT_GT(testing::chi_square_p_value(stat, 119), 1e-6) << "chi-square " << stat;
}

TEST(BijectiveShuffle, CudaWithoutGpuIsAnError) {
  if (cuda_available()) GTEST_SKIP() << "a GPU is present";
  const auto input = testing::numbered_records(10, 8);
  std::vector<std::byte> output(input.size());
  const ShuffleJob job{input.data(), output.data(), 10,
                       core::shuffle_bijection(1, StreamAddress{}, 10)};
  // A DeviceError is an extshuffle::Error, so the CLI maps it to exit code 1.
  static_assert(std::is_base_of_v<Error, DeviceError>);
  EXPECT_THROW(shuffle_records(Device::kCuda, job, 8), DeviceError);
  EXPECT_FALSE(cuda_unavailable_reason().empty());
}

}  // namespace
}  // namespace extshuffle::device::bijective_shuffle_test
