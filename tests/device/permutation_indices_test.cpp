// The index form of the bijective shuffle against the shuffle itself: the
// permutation is what shuffle_records makes of the identity, the inverse is
// its inverse, for every thread count. Deterministic: false-failure rate 0.
#include "extshuffle/device/permutation_indices.hpp"

#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "extshuffle/device/shuffle_records.hpp"

namespace extshuffle::device::permutation_indices_test {
namespace {

TEST(PermutationIndices, EqualTheShuffleOfTheIdentityAndItsInverse) {
  for (const std::uint64_t m : {0ull, 1ull, 2ull, 255ull, 256ull, 257ull, 65536ull, 65537ull, 300000ull}) {
    const core::VariablePhilox f = core::shuffle_bijection(3, {core::NodeId{1, 5}, core::Purpose::kChunkShuffle, 2}, m);
    std::vector<std::uint32_t> identity(m), expected(m);
    std::iota(identity.begin(), identity.end(), 0u);
    if (m > 0) {
      shuffle_records(Device::kCpu,
                      ShuffleJob{reinterpret_cast<const std::byte*>(identity.data()),
                                 reinterpret_cast<std::byte*>(expected.data()), m, f},
                      sizeof(std::uint32_t), 1);
    }
    for (const int threads : {1, 2, 3}) {
      std::vector<std::uint32_t> permutation(m, 0xFFFFFFFFu), inverse(m, 0xFFFFFFFFu);
      shuffle_permutation(f, m, permutation.data(), threads);
      shuffle_inverse(f, m, inverse.data(), threads);
      ASSERT_EQ(permutation, expected) << "m " << m << " threads " << threads;
      for (std::uint64_t k = 0; k < m; ++k) ASSERT_EQ(inverse[permutation[k]], k) << "m " << m;
    }
  }
}

}  // namespace
}  // namespace extshuffle::device::permutation_indices_test
