// Permutations as the statistical tests and tools/permlab see them: ranking
// small permutations, and identity inputs whose records carry their index.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace extshuffle::labstats {

// Lehmer rank of a permutation of 0..n-1 in [0, n!). Cost O(n^2).
std::uint64_t permutation_rank(std::span<const std::uint64_t> order);

// n!, exact for n <= 20.
std::uint64_t factorial(std::uint64_t n);

// n records of record_size bytes; record i starts with its index (little
// endian, as many bytes as fit) and is padded with a byte pattern of i.
std::vector<std::byte> numbered_records(std::uint64_t n, std::size_t record_size);

// Reads back the index of each record written by numbered_records (needs
// record_size >= 8 or n < 256^record_size).
std::vector<std::uint64_t> record_indices(std::span<const std::byte> data, std::size_t record_size);

}  // namespace extshuffle::labstats
