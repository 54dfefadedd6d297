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

// Whether `v` holds 0..n-1, each once: O(n) over a byte per value, by raw
// pointers. The black-box rooms compile at -O0, where sorting a copy (as
// this did) was most of a test's CPU: 12.5 million indices took 5.5 CPU-s
// to sort there, 0.3 s to mark.
inline bool is_permutation_of_iota(const std::vector<std::uint64_t>& v) {
  const std::size_t n = v.size();
  std::vector<unsigned char> seen_bytes(n, 0);
  unsigned char* const seen = seen_bytes.data();
  const std::uint64_t* const values = v.data();
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t value = values[i];
    if (value >= n || seen[value] != 0) return false;
    seen[value] = 1;
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
