#include "variable_philox_inverse.hpp"

#include <algorithm>
#include <stdexcept>

namespace permlab {

void order_by_inverse(const extshuffle::core::VariablePhilox& f, std::span<std::uint32_t> order) {
  constexpr std::size_t kMaxRecords = 64;
  const std::size_t n = order.size();
  if (n > kMaxRecords || n > f.domain_size()) throw std::invalid_argument("order_by_inverse: n too large");
  std::uint64_t keyed[kMaxRecords];  // preimage << 6 | record: sorting gives the output order
  for (std::size_t v = 0; v < n; ++v) keyed[v] = variable_philox_inverse(f, v) << 6 | v;
  std::sort(keyed, keyed + n);
  for (std::size_t i = 0; i < n; ++i) order[i] = static_cast<std::uint32_t>(keyed[i] & 63);
}

}  // namespace permlab
