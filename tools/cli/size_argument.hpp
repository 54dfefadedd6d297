// Parsing of size arguments with sort(1)'s syntax: a number with an optional
// suffix b (bytes), K, M, G, T, P, E (powers of 1024; K is the default unit
// when no suffix is given, as in sort -S) or % (of the memory the machine can
// give: physical memory or the cgroup limit).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace extshuffle::cli {

// Returns bytes. Throws UsageError naming the argument when it is malformed,
// zero, overflows 64 bits or asks for more than `usable_memory_bytes` (the
// physical memory or the cgroup limit, io/memory_limit.hpp); % is a share of
// usable_memory_bytes.
std::uint64_t parse_memory_size(const std::string& text, std::uint64_t usable_memory_bytes);

// A size with sort's syntax but no % (--shard-size): bytes; no suffix
// means KiB, as in sort -S. Throws UsageError naming `option`.
std::uint64_t parse_size(const std::string& text, const std::string& option);

// Parses a plain byte count for --record-size: digits with an optional
// K/M/G suffix (powers of 1024). Throws UsageError.
std::uint64_t parse_byte_count(const std::string& text, const std::string& option);

// An unsigned number in `base` that fills `text` exactly (no sign, no
// leading space), or nothing when it does not or passes 2^64 - 1.
std::optional<std::uint64_t> parse_unsigned(const std::string& text, int base = 10);

// The default --memory: half of what the machine can give, at least 64 MiB.
std::uint64_t default_memory_bytes();

}  // namespace extshuffle::cli
