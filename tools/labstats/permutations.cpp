#include "labstats/permutations.hpp"

#include <algorithm>
#include <cstring>

namespace extshuffle::labstats {

std::uint64_t permutation_rank(std::span<const std::uint64_t> order) {
  std::uint64_t rank = 0;
  const std::size_t n = order.size();
  for (std::size_t i = 0; i < n; ++i) {
    std::uint64_t smaller_after = 0;
    for (std::size_t j = i + 1; j < n; ++j) smaller_after += order[j] < order[i] ? 1 : 0;
    rank = rank * (n - i) + smaller_after;
  }
  return rank;
}

std::uint64_t factorial(std::uint64_t n) {
  std::uint64_t f = 1;
  for (std::uint64_t k = 2; k <= n; ++k) f *= k;
  return f;
}

std::vector<std::byte> numbered_records(std::uint64_t n, std::size_t record_size) {
  std::vector<std::byte> data(n * record_size);
  for (std::uint64_t i = 0; i < n; ++i) {
    std::byte* r = data.data() + i * record_size;
    for (std::size_t b = 0; b < record_size; ++b) {
      r[b] = static_cast<std::byte>(b < 8 ? (i >> (8 * b)) & 0xFF : (i * 131 + b) & 0xFF);
    }
  }
  return data;
}

std::vector<std::uint64_t> record_indices(std::span<const std::byte> data, std::size_t record_size) {
  std::vector<std::uint64_t> indices(data.size() / record_size);
  for (std::size_t k = 0; k < indices.size(); ++k) {
    std::uint64_t v = 0;
    std::memcpy(&v, data.data() + k * record_size, std::min<std::size_t>(8, record_size));
    if (record_size < 8) v &= (std::uint64_t{1} << (8 * record_size)) - 1;
    indices[k] = v;
  }
  return indices;
}

}  // namespace extshuffle::labstats
