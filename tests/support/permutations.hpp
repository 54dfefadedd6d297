// Permutation helpers of the tests: those tools/permlab shares come from
// extshuffle_labstats (tools/labstats/include/labstats/permutations.hpp:
// ranks of permutations, numbered records); the test-only ones are here.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>  // tests including this header use std::memcmp through it
#include <span>
#include <vector>

#include "labstats/permutations.hpp"

namespace extshuffle::testing {

using labstats::factorial;
using labstats::numbered_records;
using labstats::permutation_rank;
using labstats::record_indices;

inline bool is_permutation_of_iota(std::vector<std::uint64_t> v) {
  std::sort(v.begin(), v.end());
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (v[i] != i) return false;
  }
  return true;
}

// FNV-1a over bytes: a stable fingerprint for golden tests.
inline std::uint64_t fnv1a(std::span<const std::byte> data) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (std::byte b : data) {
    h ^= static_cast<std::uint64_t>(b);
    h *= 0x100000001b3ull;
  }
  return h;
}

}  // namespace extshuffle::testing
