// Arithmetic and timing shared by the executors of fixed-size and of
// variable-size records.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <stdexcept>

namespace extshuffle::driver {

using Clock = std::chrono::steady_clock;
inline double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

inline constexpr std::uint64_t kIoAlign = 4096;
// Larger bucket buffers gain nothing measurable (bench/external_bench.sh).
inline constexpr std::uint64_t kMaxBucketBuffer = std::uint64_t{8} << 20;

inline std::uint64_t align_down(std::uint64_t x, std::uint64_t a) { return x / a * a; }
inline std::uint64_t align_up(std::uint64_t x, std::uint64_t a) { return (x + a - 1) / a * a; }

// Bytes per bucket buffer when p buckets share `share` bytes, two buffers each.
inline std::uint64_t bucket_buffer_bytes(std::uint64_t share, std::uint64_t p) {
  std::uint64_t per_bucket = std::min(kMaxBucketBuffer, share / (2 * p));
  per_bucket = per_bucket >= kIoAlign ? align_down(per_bucket, kIoAlign) : align_down(per_bucket, 64);
  if (per_bucket == 0) throw std::invalid_argument("--memory too small for the plan's fanout");
  return per_bucket;
}

}  // namespace extshuffle::driver
