// The index form of the bijective shuffle on the CPU: the domain is cut into
// fixed tiles; a count pass finds each tile's kept indices (f(i) < m), an
// exclusive prefix sum gives each tile its first output position, and a
// second pass evaluates f again and writes the indices. Fixed tiles make the
// result independent of the thread count. The records such a permutation
// orders are gathered here too, prefetched (record_gather.hpp).
#include "extshuffle/device/permutation_indices.hpp"

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "extshuffle/device/shuffle_records.hpp"
#include "record_gather.hpp"
#include "variable_philox_batch.hpp"

namespace extshuffle::device {
namespace {

constexpr std::uint64_t kTile = std::uint64_t{1} << 16;

// Calls take(value, position) for the kept values of domain [begin, end), the
// first of which has output position `position`.
template <class Take>
void walk_tile(const core::VariablePhilox& f, std::uint64_t m, std::uint64_t begin, std::uint64_t end,
               std::uint64_t position, Take&& take) {
  alignas(64) std::uint64_t values[cpu::kPhiloxBatch];
  for (std::uint64_t base = begin; base < end; base += cpu::kPhiloxBatch) {
    const auto count = static_cast<std::uint32_t>(std::min<std::uint64_t>(cpu::kPhiloxBatch, end - base));
    cpu::evaluate_variable_philox(f, base, count, values);
    for (std::uint32_t j = 0; j < count; ++j) {
      if (values[j] < m) take(values[j], position++);
    }
  }
}

template <class Take>
void walk_domain(const core::VariablePhilox& f, std::uint64_t m, int threads, Take&& take) {
  if (m == 0) return;
  if (m > (std::uint64_t{1} << 32)) throw std::invalid_argument("index permutations hold at most 2^32 records");
  const std::uint64_t domain = f.domain_size();
  const std::uint64_t tiles = (domain + kTile - 1) / kTile;
  threads = resolve_threads(threads);
  if (tiles == 1 || threads == 1) {
    walk_tile(f, m, 0, domain, 0, take);
    return;
  }
  std::vector<std::uint64_t> first(tiles + 1, 0);
#pragma omp parallel for schedule(static) num_threads(threads)
  for (std::int64_t t = 0; t < static_cast<std::int64_t>(tiles); ++t) {
    const std::uint64_t begin = static_cast<std::uint64_t>(t) * kTile;
    std::uint64_t kept = 0;
    walk_tile(f, m, begin, std::min(domain, begin + kTile), 0, [&](std::uint64_t, std::uint64_t) { ++kept; });
    first[t + 1] = kept;
  }
  for (std::uint64_t t = 0; t < tiles; ++t) first[t + 1] += first[t];
#pragma omp parallel for schedule(static) num_threads(threads)
  for (std::int64_t t = 0; t < static_cast<std::int64_t>(tiles); ++t) {
    const std::uint64_t begin = static_cast<std::uint64_t>(t) * kTile;
    walk_tile(f, m, begin, std::min(domain, begin + kTile), first[t], take);
  }
}

}  // namespace

void shuffle_permutation(const core::VariablePhilox& f, std::uint64_t m, std::uint32_t* permutation, int threads) {
  walk_domain(f, m, threads, [permutation](std::uint64_t value, std::uint64_t position) {
    permutation[position] = static_cast<std::uint32_t>(value);
  });
}

void shuffle_inverse(const core::VariablePhilox& f, std::uint64_t m, std::uint32_t* inverse, int threads) {
  walk_domain(f, m, threads, [inverse](std::uint64_t value, std::uint64_t position) {
    inverse[value] = static_cast<std::uint32_t>(position);
  });
}

void gather_by_permutation(const std::byte* records, const std::uint32_t* permutation, std::uint64_t count,
                           std::size_t record_size, std::byte* out) {
  cpu::gather_indexed(records, permutation, count, record_size, out, cpu::kGatherPrefetchRecords);
}

void cpu::gather_indexed(const std::byte* from, const std::uint32_t* indices, std::uint64_t count,
                         std::size_t record_size, std::byte* to, std::uint32_t distance) {
  prefetch_first(from, indices, count, record_size, distance);
  with_record_copy(record_size, [&]<class Copy>(Copy) {
    gather_records<Copy>(from, GatherIndices<std::uint32_t>{indices, count}, record_size, to, distance);
  });
}

}  // namespace extshuffle::device
