// Arithmetic shared by the walk and the record layouts.
#pragma once

#include <algorithm>
#include <cstdint>
#include <exception>
#include <string>

#include "extshuffle/errors.hpp"
#include "extshuffle/io/bucket_store.hpp"
#include "tuning.hpp"

namespace extshuffle::ioperm {

inline std::uint64_t align_down(std::uint64_t x, std::uint64_t a) { return x / a * a; }
inline std::uint64_t align_up(std::uint64_t x, std::uint64_t a) { return (x + a - 1) / a * a; }

// The one way the arena is carved: `count` objects of T at `cursor`, which
// moves past them to the next 64-byte boundary (a cache line, so buffers
// used by different threads never share one).
template <class T>
T* carve(std::byte*& cursor, std::uint64_t count) {
  T* at = reinterpret_cast<T*>(cursor);
  cursor += align_up(count * sizeof(T), 64);
  return at;
}

// The error for a record larger than what --memory leaves for reading one.
[[noreturn]] inline void throw_record_too_large(std::uint64_t bytes, std::uint64_t budget) {
  throw InputError("a record of at least " + std::to_string(bytes) + " bytes does not fit in what --memory " +
                   std::to_string(budget) + " leaves for one record: raise --memory");
}

// Bytes per bucket buffer when p buckets share `share` bytes, two buffers each.
inline std::uint64_t bucket_buffer_bytes(std::uint64_t share, std::uint64_t p) {
  std::uint64_t per_bucket = std::min(tuning::kMaxBucketBuffer, share / (2 * p));
  per_bucket = per_bucket >= io::kScratchAlign ? align_down(per_bucket, io::kScratchAlign) : align_down(per_bucket, 64);
  if (per_bucket == 0) throw BudgetError("--memory too small for the plan's fanout");
  return per_bucket;
}

// Runs scatter(j) for every bucket j in [0, p), the buckets split into
// contiguous ranges across `threads` threads (each bucket's writer is used by
// one thread only). The first exception thrown is rethrown here.
template <class Scatter>
void scatter_by_bucket_ranges(std::uint64_t p, int threads, Scatter&& scatter) {
  std::exception_ptr failure;
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1 && p > 1)
  for (std::int64_t j = 0; j < static_cast<std::int64_t>(p); ++j) {
    try {
      scatter(static_cast<std::uint64_t>(j));
    } catch (...) {
#pragma omp critical(extshuffle_scatter_failure)
      if (!failure) failure = std::current_exception();
    }
  }
  if (failure) std::rethrow_exception(failure);
}

}  // namespace extshuffle::ioperm
