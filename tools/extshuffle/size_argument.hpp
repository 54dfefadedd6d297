// Parsing of size arguments with sort(1)'s syntax: a number with an optional
// suffix b (bytes), K, M, G, T, P, E (powers of 1024; K is the default unit
// when no suffix is given, as in sort -S) or % (of physical memory).
#pragma once

#include <cstdint>
#include <string>

namespace extshuffle::cli {

// Returns bytes. Throws UsageError naming the argument when it is malformed,
// zero or overflows 64 bits.
std::uint64_t parse_memory_size(const std::string& text, std::uint64_t physical_memory_bytes);

// Parses a plain byte count for --record-size: digits with an optional
// K/M/G suffix (powers of 1024). Throws UsageError.
std::uint64_t parse_byte_count(const std::string& text, const std::string& option);

// Physical memory, and the lesser of half of it and the cgroup memory limit:
// the default --memory.
std::uint64_t physical_memory_bytes();
std::uint64_t default_memory_bytes();

}  // namespace extshuffle::cli
