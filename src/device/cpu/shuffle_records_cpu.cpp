#include "shuffle_records_cpu.hpp"

#include <omp.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "extshuffle/device/shuffle_records.hpp"
#include "variable_philox_batch.hpp"

namespace extshuffle::device::cpu {
namespace {

// Copies one record; a compile-time size turns memcpy into a single move.
template <std::size_t kSize>
struct FixedCopy {
  void operator()(std::byte* to, const std::byte* from, std::size_t) const {
    std::memcpy(to, from, kSize);
  }
};
struct VariableCopy {
  void operator()(std::byte* to, const std::byte* from, std::size_t size) const {
    std::memcpy(to, from, size);
  }
};

// Steps 1-3 of Algorithm 1 over the domain indices [begin, end): evaluate f,
// keep the values below n (compaction), gather those records to `output`
// starting at record `out_index`. Returns the next output index.
template <class Copy>
std::uint64_t gather_range(const ShuffleJob& job, std::uint64_t begin, std::uint64_t end,
                           std::size_t record_size, std::uint64_t out_index) {
  alignas(64) std::uint64_t values[kPhiloxBatch];
  const Copy copy;
  for (std::uint64_t base = begin; base < end; base += kPhiloxBatch) {
    const auto count = static_cast<std::uint32_t>(std::min<std::uint64_t>(kPhiloxBatch, end - base));
    evaluate_variable_philox(job.bijection, base, count, values);
    // Compaction without branches (about half the values are dropped when n
    // is just above a power of two), then a gather with independent loads.
    std::uint32_t kept = 0;
    for (std::uint32_t j = 0; j < count; ++j) {
      values[kept] = values[j];
      kept += values[j] < job.records ? 1 : 0;
    }
    std::byte* to = job.output + out_index * record_size;
    for (std::uint32_t j = 0; j < kept; ++j) copy(to + j * record_size, job.input + values[j] * record_size, record_size);
    out_index += kept;
  }
  return out_index;
}

std::uint64_t count_range(const ShuffleJob& job, std::uint64_t begin, std::uint64_t end) {
  alignas(64) std::uint64_t values[kPhiloxBatch];
  std::uint64_t kept = 0;
  for (std::uint64_t base = begin; base < end; base += kPhiloxBatch) {
    const auto count = static_cast<std::uint32_t>(std::min<std::uint64_t>(kPhiloxBatch, end - base));
    evaluate_variable_philox(job.bijection, base, count, values);
    for (std::uint32_t j = 0; j < count; ++j) kept += values[j] < job.records ? 1 : 0;
  }
  return kept;
}

template <class Copy>
void shuffle_one_serial(const ShuffleJob& job, std::size_t record_size) {
  if (job.records == 0) return;
  gather_range<Copy>(job, 0, job.bijection.domain_size(), record_size, 0);
}

// A large job split across threads: the domain is cut into fixed tiles; a
// count pass finds how many kept indices each tile has, an exclusive prefix
// sum gives each tile its output offset, and a gather pass re-evaluates f and
// writes. Re-evaluating costs less than storing n indices (memory bound).
template <class Copy>
void shuffle_one_parallel(const ShuffleJob& job, std::size_t record_size, int threads) {
  constexpr std::uint64_t kTile = std::uint64_t{1} << 16;
  const std::uint64_t domain = job.bijection.domain_size();
  const std::uint64_t tiles = (domain + kTile - 1) / kTile;
  std::vector<std::uint64_t> offsets(tiles + 1, 0);
#pragma omp parallel for schedule(static) num_threads(threads)
  for (std::int64_t t = 0; t < static_cast<std::int64_t>(tiles); ++t) {
    const std::uint64_t begin = static_cast<std::uint64_t>(t) * kTile;
    offsets[t + 1] = count_range(job, begin, std::min(domain, begin + kTile));
  }
  for (std::uint64_t t = 0; t < tiles; ++t) offsets[t + 1] += offsets[t];
#pragma omp parallel for schedule(static) num_threads(threads)
  for (std::int64_t t = 0; t < static_cast<std::int64_t>(tiles); ++t) {
    const std::uint64_t begin = static_cast<std::uint64_t>(t) * kTile;
    gather_range<Copy>(job, begin, std::min(domain, begin + kTile), record_size, offsets[t]);
  }
}

// Below this much work a parallel region costs more than it saves.
constexpr std::uint64_t kSerialBatchDomain = std::uint64_t{1} << 15;

template <class Copy>
void shuffle_jobs(std::span<const ShuffleJob> jobs, std::size_t record_size, int threads) {
  std::uint64_t domain = 0;
  for (const ShuffleJob& job : jobs) domain += job.records == 0 ? 0 : job.bijection.domain_size();
  if (domain < kSerialBatchDomain || threads == 1) {
    for (const ShuffleJob& job : jobs) shuffle_one_serial<Copy>(job, record_size);
    return;
  }
  // Splitting a job evaluates its bijection twice (count, then gather), so
  // large jobs are split only when there are too few jobs to give every
  // thread one of its own.
  const bool split_large = jobs.size() < static_cast<std::size_t>(threads);
  std::vector<std::size_t> small;
  for (std::size_t k = 0; k < jobs.size(); ++k) {
    if (split_large && jobs[k].records >= kParallelJobRecords) {
      shuffle_one_parallel<Copy>(jobs[k], record_size, threads);
    } else {
      small.push_back(k);
    }
  }
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
  for (std::int64_t k = 0; k < static_cast<std::int64_t>(small.size()); ++k) {
    shuffle_one_serial<Copy>(jobs[small[k]], record_size);
  }
}

}  // namespace

void shuffle_records_cpu(std::span<const ShuffleJob> jobs, std::size_t record_size, int threads) {
  threads = resolve_threads(threads);
  switch (record_size) {
    case 1: return shuffle_jobs<FixedCopy<1>>(jobs, record_size, threads);
    case 2: return shuffle_jobs<FixedCopy<2>>(jobs, record_size, threads);
    case 4: return shuffle_jobs<FixedCopy<4>>(jobs, record_size, threads);
    case 8: return shuffle_jobs<FixedCopy<8>>(jobs, record_size, threads);
    case 16: return shuffle_jobs<FixedCopy<16>>(jobs, record_size, threads);
    default: return shuffle_jobs<VariableCopy>(jobs, record_size, threads);
  }
}

}  // namespace extshuffle::device::cpu
