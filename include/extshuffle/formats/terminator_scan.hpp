// Bulk scans for a terminator byte, for records that cannot hide one inside
// quotes (lines, TSV, JSONL: everything but --format csv). Finding records
// one memchr call at a time cost about 30 ns a record, a sixth of the main
// thread in a two-pass text run (perf, docs/benchmarks.md); comparing 32
// bytes at a time and walking the match mask costs a few ns. AVX2 is chosen
// at run time; other CPUs get a memchr loop with the same results.
#pragma once

#include <cstddef>
#include <cstdint>

namespace extshuffle::formats {

// The ends (one past the terminator, as offsets from `begin`) of the first
// records in [begin, end), at most `max` of them, written to `ends`; returns
// how many were found. Bytes after the last terminator are not a record.
// The offsets must fit the type: callers with more than 4 GiB use 64 bits.
std::size_t find_record_ends(const char* begin, const char* end, char terminator, std::size_t max,
                             std::uint32_t* ends);
std::size_t find_record_ends(const char* begin, const char* end, char terminator, std::size_t max,
                             std::uint64_t* ends);

// How many times `terminator` occurs in [begin, end).
std::uint64_t count_terminators(const char* begin, const char* end, char terminator);

// The same with a chosen kernel, so that tests compare every kernel this CPU
// has against the others; the functions above take the fastest.
enum class ScanKernel { kPortable, kAvx2 };
bool scan_kernel_supported(ScanKernel kernel);
std::size_t find_record_ends(const char* begin, const char* end, char terminator, std::size_t max,
                             std::uint64_t* ends, ScanKernel kernel);
std::uint64_t count_terminators(const char* begin, const char* end, char terminator, ScanKernel kernel);

}  // namespace extshuffle::formats
