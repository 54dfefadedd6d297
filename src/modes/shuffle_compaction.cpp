// A bijective shuffle's order on a wider domain (shuffle_compaction.hpp).
#include "shuffle_compaction.hpp"

#include <algorithm>
#include <stdexcept>

#include "device/cpu/variable_philox_batch.hpp"
#include "extshuffle/core/variable_philox_inverse.hpp"
#include "extshuffle/device/permutation_indices.hpp"

namespace extshuffle::modes {

ShuffleCompaction::ShuffleCompaction(const core::VariablePhilox& f, std::uint64_t m) : m_(m) {
  const std::uint64_t domain = f.domain_size();
  if (m > (std::uint64_t{1} << 32) || m >= domain) {
    throw std::invalid_argument("shuffle compaction: " + std::to_string(m) + " records on a domain of " +
                                std::to_string(domain));
  }
  if (!builds_holes(m, domain)) {
    order_.resize(m);
    // One thread: the caller spreads its own work (parallel_tasks.hpp), and
    // OpenMP must not run in a process that may fork afterwards.
    device::shuffle_permutation(f, m, order_.data(), 1);
    return;
  }
  kept_before_.resize(domain - m);
  for (std::uint64_t y = m; y < domain; ++y) kept_before_[y - m] = core::variable_philox_inverse(f, y);
  std::sort(kept_before_.begin(), kept_before_.end());
  for (std::size_t j = 0; j < kept_before_.size(); ++j) kept_before_[j] -= j;
}

void ShuffleCompaction::records(const core::VariablePhilox& f, std::span<std::uint64_t> values, bool ascending) const {
  if (!order_.empty()) {
    for (std::uint64_t& v : values) v = order_[v];
    return;
  }
  // Output k lies at domain point k + j, j the holes whose kept-before count
  // is at most k.
  if (ascending && !values.empty()) {
    std::size_t j = static_cast<std::size_t>(std::upper_bound(kept_before_.begin(), kept_before_.end(), values[0]) -
                                             kept_before_.begin());
    for (std::uint64_t& v : values) {
      while (j < kept_before_.size() && kept_before_[j] <= v) ++j;
      v += j;
    }
  } else {
    for (std::uint64_t& v : values) {
      v += static_cast<std::uint64_t>(std::upper_bound(kept_before_.begin(), kept_before_.end(), v) -
                                      kept_before_.begin());
    }
  }
  for (std::size_t first = 0; first < values.size(); first += device::cpu::kPhiloxBatch) {
    const auto count =
        static_cast<std::uint32_t>(std::min<std::size_t>(device::cpu::kPhiloxBatch, values.size() - first));
    device::cpu::evaluate_variable_philox_at(f, values.data() + first, count, values.data() + first);
  }
}

std::uint64_t ShuffleCompaction::output_of(const core::VariablePhilox& f, std::uint64_t d) const {
  if (order_.empty()) {
    // Holes before d: those whose point (kept_before + j) is below d.
    std::size_t lo = 0, hi = kept_before_.size();
    while (lo < hi) {
      const std::size_t mid = (lo + hi) / 2;
      if (kept_before_[mid] + mid < d)
        lo = mid + 1;
      else
        hi = mid;
    }
    return d - lo;
  }
  std::uint64_t rank = 0;
  for (std::uint64_t i = 0; i < d; ++i) rank += f(i) < m_ ? 1 : 0;
  return rank;
}

}  // namespace extshuffle::modes
