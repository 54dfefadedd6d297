#include "extshuffle/formats/terminator_scan.hpp"

#include <immintrin.h>

#include <cstring>

namespace extshuffle::formats {
namespace {

template <class Offset>
std::size_t ends_portable(const char* begin, const char* end, char terminator, std::size_t max, Offset* ends) {
  std::size_t found = 0;
  for (const char* at = begin; found < max && at < end; ++found) {
    const void* hit = std::memchr(at, terminator, static_cast<std::size_t>(end - at));
    if (!hit) break;
    at = static_cast<const char*>(hit) + 1;
    ends[found] = static_cast<Offset>(at - begin);
  }
  return found;
}

// 64 bytes per step with few unpredictable branches (simdjson's trick): the
// first four matches are stored unconditionally and the count advances by
// the popcount; only a block with more than four terminators loops.
template <class Offset>
__attribute__((target("avx2,bmi,popcnt"))) std::size_t ends_avx2(const char* begin, const char* end,
                                                                  char terminator, std::size_t max, Offset* ends) {
  const __m256i needle = _mm256_set1_epi8(terminator);
  std::size_t found = 0;
  const char* at = begin;
  // Each step stores at most 64 entries and always 4: stop 64 short of max.
  for (; end - at >= 64 && max - found >= 64; at += 64) {
    const __m256i low = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(at));
    const __m256i high = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(at + 32));
    std::uint64_t mask = (std::uint64_t{static_cast<std::uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(high, needle)))} << 32) |
                         static_cast<std::uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(low, needle)));
    const auto count = static_cast<std::size_t>(_mm_popcnt_u64(mask));
    const auto base = static_cast<Offset>(at - begin) + 1;
    Offset* out = ends + found;
    for (int k = 0; k < 4; ++k) {
      out[k] = base + static_cast<Offset>(_tzcnt_u64(mask));
      mask = _blsr_u64(mask);
    }
    for (std::size_t k = 4; k < count; ++k) {
      out[k] = base + static_cast<Offset>(_tzcnt_u64(mask));
      mask = _blsr_u64(mask);
    }
    found += count;
  }
  const std::size_t rest = ends_portable(at, end, terminator, max - found, ends + found);
  const auto shift = static_cast<Offset>(at - begin);
  for (std::size_t k = found; k < found + rest; ++k) ends[k] += shift;
  return found + rest;
}

__attribute__((target("avx2,popcnt"))) std::uint64_t count_avx2(const char* begin, const char* end, char terminator) {
  const __m256i needle = _mm256_set1_epi8(terminator);
  std::uint64_t count = 0;
  const char* at = begin;
  for (; end - at >= 64; at += 64) {
    const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(at));
    const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(at + 32));
    const auto low = static_cast<std::uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(a, needle)));
    const auto high = static_cast<std::uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(b, needle)));
    count += static_cast<std::uint64_t>(_mm_popcnt_u64((std::uint64_t{high} << 32) | low));
  }
  for (; at < end; ++at) count += *at == terminator ? 1 : 0;
  return count;
}

std::uint64_t count_portable(const char* begin, const char* end, char terminator) {
  std::uint64_t count = 0;
  for (const char* at = begin; at < end; ++at) count += *at == terminator ? 1 : 0;
  return count;
}

ScanKernel best_kernel() {
  static const ScanKernel best = scan_kernel_supported(ScanKernel::kAvx2) ? ScanKernel::kAvx2 : ScanKernel::kPortable;
  return best;
}

template <class Offset>
std::size_t ends_with(ScanKernel kernel, const char* begin, const char* end, char terminator, std::size_t max,
                      Offset* ends) {
  return kernel == ScanKernel::kAvx2 ? ends_avx2(begin, end, terminator, max, ends)
                                     : ends_portable(begin, end, terminator, max, ends);
}

}  // namespace

bool scan_kernel_supported(ScanKernel kernel) {
  if (kernel == ScanKernel::kPortable) return true;
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi") && __builtin_cpu_supports("popcnt");
}

std::size_t find_record_ends(const char* begin, const char* end, char terminator, std::size_t max,
                             std::uint32_t* ends) {
  return ends_with(best_kernel(), begin, end, terminator, max, ends);
}

std::size_t find_record_ends(const char* begin, const char* end, char terminator, std::size_t max,
                             std::uint64_t* ends) {
  return ends_with(best_kernel(), begin, end, terminator, max, ends);
}

std::size_t find_record_ends(const char* begin, const char* end, char terminator, std::size_t max,
                             std::uint64_t* ends, ScanKernel kernel) {
  return ends_with(kernel, begin, end, terminator, max, ends);
}

std::uint64_t count_terminators(const char* begin, const char* end, char terminator) {
  return count_terminators(begin, end, terminator, best_kernel());
}

std::uint64_t count_terminators(const char* begin, const char* end, char terminator, ScanKernel kernel) {
  return kernel == ScanKernel::kAvx2 ? count_avx2(begin, end, terminator) : count_portable(begin, end, terminator);
}

}  // namespace extshuffle::formats
