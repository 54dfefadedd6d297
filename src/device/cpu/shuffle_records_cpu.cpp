#include "shuffle_records_cpu.hpp"

#include <omp.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "extshuffle/device/shuffle_records.hpp"
#include "record_gather.hpp"
#include "variable_philox_batch.hpp"

namespace extshuffle::device::cpu {
namespace {

// The values f(base), ..., f(base + count - 1) below job.records, in order,
// at the front of `values`; returns how many. Compaction without branches:
// about half the values are dropped when n is just above a power of two.
std::uint32_t kept_values(const ShuffleJob& job, std::uint64_t base, std::uint32_t count, std::uint64_t* values) {
  evaluate_variable_philox(job.bijection, base, count, values);
  std::uint32_t kept = 0;
  for (std::uint32_t j = 0; j < count; ++j) {
    values[kept] = values[j];
    kept += values[j] < job.records ? 1 : 0;
  }
  return kept;
}

// Steps 1-3 of Algorithm 1 over the domain indices [begin, end): evaluate f,
// keep the values below n (compaction), gather those records to `output`
// starting at record `out_index`. Returns the next output index. The next
// batch's values are computed before this batch is copied, so that its
// first sources are prefetched too (record_gather.hpp).
template <class Copy>
std::uint64_t gather_range(const ShuffleJob& job, std::uint64_t begin, std::uint64_t end, std::size_t record_size,
                           std::uint64_t out_index, const GatherTuning& tuning) {
  alignas(64) std::uint64_t values[2][kPhiloxBatch];
  auto batch = [&](std::uint64_t base, std::uint64_t* to) -> std::uint32_t {
    if (base >= end) return 0;
    return kept_values(job, base, static_cast<std::uint32_t>(std::min<std::uint64_t>(tuning.batch_records, end - base)),
                       to);
  };
  int current = 0;
  std::uint32_t kept = batch(begin, values[current]);
  prefetch_first(job.input, values[current], kept, record_size, tuning.prefetch_records);
  for (std::uint64_t base = begin; base < end; base += tuning.batch_records) {
    const std::uint32_t next_kept = batch(base + tuning.batch_records, values[current ^ 1]);
    gather_records<Copy>(job.input, GatherIndices<std::uint64_t>{values[current], kept, values[current ^ 1], next_kept},
                         record_size, job.output + out_index * record_size, tuning.prefetch_records);
    out_index += kept;
    kept = next_kept;
    current ^= 1;
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

// One thread's share of a batch: the domain indices [begin, end) of a job,
// whose first kept value goes to output record out_index.
struct Piece {
  std::size_t job;
  std::uint64_t begin, end, out_index;
};

// Tiles of the domain that pieces are cut into (fixed, so that the output
// does not depend on the thread count).
constexpr std::uint64_t kTile = std::uint64_t{1} << 16;

// Pieces [first, end) are tiles of jobs with indices to drop: a count pass
// over them all, on every thread, gives each its output offset.
void offset_counted_tiles(std::span<const ShuffleJob> jobs, std::vector<Piece>& pieces, std::size_t first,
                          int threads) {
  const auto end = static_cast<std::int64_t>(pieces.size());
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
  for (std::int64_t t = static_cast<std::int64_t>(first); t < end; ++t) {
    pieces[t].out_index = count_range(jobs[pieces[t].job], pieces[t].begin, pieces[t].end);
  }
  std::uint64_t at = 0;
  for (std::size_t t = first; t < pieces.size(); ++t) {
    if (t > first && pieces[t].job != pieces[t - 1].job) at = 0;
    const std::uint64_t kept = pieces[t].out_index;
    pieces[t].out_index = at;
    at += kept;
  }
}

// The batch cut into pieces for threads to take in turn, so that they finish
// together (docs/benchmarks.md, "Prefetched gathers"):
// 1. a job with no index to drop (records == domain: every full chunk and
//    every leaf of a power-of-two size) is cut into tiles for free, each
//    tile's output offset being its own first index;
// 2. a job with indices to drop costs a count pass more to cut (f evaluated
//    twice), so it is cut only when there are fewer jobs than threads;
// 3. other jobs are one piece each, listed first, so that tiles fill in the
//    end of the batch.
std::vector<Piece> batch_pieces(std::span<const ShuffleJob> jobs, int threads) {
  std::vector<Piece> whole, tiles, counted;
  const bool cut_counted = jobs.size() < static_cast<std::size_t>(threads);
  for (std::size_t k = 0; k < jobs.size(); ++k) {
    const std::uint64_t domain = jobs[k].bijection.domain_size();
    if (jobs[k].records == 0) continue;
    const bool exact = jobs[k].records == domain;
    if (!exact && !(cut_counted && jobs[k].records >= kParallelJobRecords)) {
      whole.push_back({k, 0, domain, 0});
      continue;
    }
    for (std::uint64_t begin = 0; begin < domain; begin += kTile) {
      (exact ? tiles : counted).push_back({k, begin, std::min(domain, begin + kTile), begin});
    }
  }
  const std::size_t first_counted = whole.size() + tiles.size();
  whole.insert(whole.end(), tiles.begin(), tiles.end());
  whole.insert(whole.end(), counted.begin(), counted.end());
  if (first_counted < whole.size()) offset_counted_tiles(jobs, whole, first_counted, threads);
  return whole;
}

// Below this much work a parallel region costs more than it saves.
constexpr std::uint64_t kSerialBatchDomain = std::uint64_t{1} << 15;

template <class Copy>
void shuffle_jobs(std::span<const ShuffleJob> jobs, std::size_t record_size, int threads, const GatherTuning& tuning) {
  std::uint64_t domain = 0;
  for (const ShuffleJob& job : jobs) domain += job.records == 0 ? 0 : job.bijection.domain_size();
  if (domain < kSerialBatchDomain || threads == 1) {
    for (const ShuffleJob& job : jobs) {
      if (job.records > 0) gather_range<Copy>(job, 0, job.bijection.domain_size(), record_size, 0, tuning);
    }
    return;
  }
  const std::vector<Piece> pieces = batch_pieces(jobs, threads);
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
  for (std::int64_t t = 0; t < static_cast<std::int64_t>(pieces.size()); ++t) {
    const Piece& piece = pieces[t];
    gather_range<Copy>(jobs[piece.job], piece.begin, piece.end, record_size, piece.out_index, tuning);
  }
}

}  // namespace

void shuffle_records_cpu(std::span<const ShuffleJob> jobs, std::size_t record_size, int threads,
                         const GatherTuning& tuning) {
  threads = resolve_threads(threads);
  with_record_copy(record_size, [&]<class Copy>(Copy) { shuffle_jobs<Copy>(jobs, record_size, threads, tuning); });
}

}  // namespace extshuffle::device::cpu
