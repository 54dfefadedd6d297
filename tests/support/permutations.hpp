// Helpers shared by the statistical tests: ranking small permutations, a
// fingerprint of shuffled record arrays, and identity inputs.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

namespace extshuffle::testing {

// Lehmer rank of a permutation of 0..n-1 in [0, n!).
inline std::uint64_t permutation_rank(std::span<const std::uint64_t> order) {
  std::uint64_t rank = 0;
  const std::size_t n = order.size();
  for (std::size_t i = 0; i < n; ++i) {
    std::uint64_t smaller_after = 0;
    for (std::size_t j = i + 1; j < n; ++j) smaller_after += order[j] < order[i] ? 1 : 0;
    rank = rank * (n - i) + smaller_after;
  }
  return rank;
}

inline std::uint64_t factorial(std::uint64_t n) {
  std::uint64_t f = 1;
  for (std::uint64_t k = 2; k <= n; ++k) f *= k;
  return f;
}

// n records of record_size bytes; record i starts with its index (little
// endian, as many bytes as fit) and is padded with a byte pattern of i.
inline std::vector<std::byte> numbered_records(std::uint64_t n, std::size_t record_size) {
  std::vector<std::byte> data(n * record_size);
  for (std::uint64_t i = 0; i < n; ++i) {
    std::byte* r = data.data() + i * record_size;
    for (std::size_t b = 0; b < record_size; ++b) {
      r[b] = static_cast<std::byte>(b < 8 ? (i >> (8 * b)) & 0xFF : (i * 131 + b) & 0xFF);
    }
  }
  return data;
}

// Reads back the index of each record written by numbered_records (needs
// record_size >= 8 or n < 256^record_size).
inline std::vector<std::uint64_t> record_indices(std::span<const std::byte> data,
                                                 std::size_t record_size) {
  std::vector<std::uint64_t> indices(data.size() / record_size);
  for (std::size_t k = 0; k < indices.size(); ++k) {
    std::uint64_t v = 0;
    std::memcpy(&v, data.data() + k * record_size, std::min<std::size_t>(8, record_size));
    if (record_size < 8) v &= (std::uint64_t{1} << (8 * record_size)) - 1;
    indices[k] = v;
  }
  return indices;
}

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
