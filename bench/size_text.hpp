// Sizes on the command lines of the bench helpers: a number with an optional
// K, M or G suffix (powers of 1024). Exits with status 2 on anything else,
// naming `program`.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>

inline std::uint64_t parse_size(const char* program, const char* text) {
  char* end = nullptr;
  std::uint64_t value = std::strtoull(text, &end, 10);
  switch (*end) {
    case 'G': case 'g': value <<= 10; [[fallthrough]];
    case 'M': case 'm': value <<= 10; [[fallthrough]];
    case 'K': case 'k': value <<= 10; ++end; break;
    default: break;
  }
  if (*end != '\0' || value == 0) {
    std::fprintf(stderr, "%s: bad size: %s\n", program, text);
    std::exit(2);
  }
  return value;
}
