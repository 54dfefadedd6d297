#include "size_argument.hpp"

#include <algorithm>
#include <cctype>
#include <optional>
#include <stdexcept>
#include <string>

#include "extshuffle/errors.hpp"
#include "extshuffle/io/memory_limit.hpp"

namespace extshuffle::cli {
namespace {

[[noreturn]] void bad_size(const std::string& option, const std::string& text, const char* why) {
  throw UsageError("invalid " + option + " '" + text + "': " + why);
}

// Digits, then an optional fraction is not accepted (sort accepts none either).
std::uint64_t leading_number(const std::string& text, const std::string& option, std::size_t& end) {
  end = 0;
  std::uint64_t value = 0;
  while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end]))) {
    const std::uint64_t digit = static_cast<std::uint64_t>(text[end] - '0');
    if (value > (UINT64_MAX - digit) / 10) bad_size(option, text, "too large");
    value = value * 10 + digit;
    ++end;
  }
  if (end == 0) bad_size(option, text, "expected a number");
  return value;
}

std::uint64_t scale(std::uint64_t value, int power, const std::string& option, const std::string& text) {
  for (int k = 0; k < power; ++k) {
    if (value > UINT64_MAX / 1024) bad_size(option, text, "too large");
    value *= 1024;
  }
  return value;
}

int suffix_power(char c) {
  switch (std::toupper(static_cast<unsigned char>(c))) {
    case 'B': return 0;
    case 'K': return 1;
    case 'M': return 2;
    case 'G': return 3;
    case 'T': return 4;
    case 'P': return 5;
    case 'E': return 6;
    default: return -1;
  }
}

}  // namespace

namespace {

// sort -S's units: no suffix means KiB; b, K, M, ... (optionally followed by
// B or i: "512MB", "512Mi"); or, where `usable_memory` is given, %.
std::uint64_t parse_sort_size(const std::string& text, const std::string& option, const std::uint64_t* usable_memory) {
  std::size_t end = 0;
  const std::uint64_t value = leading_number(text, option, end);
  std::uint64_t bytes = 0;
  if (end == text.size()) {
    bytes = scale(value, 1, option, text);  // sort -S: no suffix means KiB
  } else if (usable_memory && end + 1 == text.size() && text[end] == '%') {
    if (value > 100) bad_size(option, text, "more than 100%");
    bytes = static_cast<std::uint64_t>(static_cast<long double>(*usable_memory) * value / 100);
  } else if (end + 1 == text.size() && suffix_power(text[end]) >= 0) {
    bytes = scale(value, suffix_power(text[end]), option, text);
  } else if (end + 2 == text.size() && suffix_power(text[end]) > 0 &&
             (text[end + 1] == 'B' || text[end + 1] == 'b' || text[end + 1] == 'i')) {
    bytes = scale(value, suffix_power(text[end]), option, text);  // "512MB", "512Mi"
  } else {
    bad_size(option, text, usable_memory ? "unknown suffix (use K, M, G, T or %)" : "unknown suffix (use b, K, M, G or T)");
  }
  if (bytes == 0) bad_size(option, text, "must be positive");
  return bytes;
}

}  // namespace

std::uint64_t parse_memory_size(const std::string& text, std::uint64_t usable_memory) {
  const std::uint64_t bytes = parse_sort_size(text, "--memory", &usable_memory);
  // A budget the machine cannot give would be paged or killed once the input
  // outgrows RAM; a silent cap would change the schedule asked for. Refuse.
  if (bytes > usable_memory) {
    throw UsageError("invalid --memory '" + text + "': more than the " + std::to_string(usable_memory >> 20) +
                     " MiB this machine can give (its physical memory or its cgroup limit)");
  }
  return bytes;
}

std::uint64_t parse_size(const std::string& text, const std::string& option) {
  return parse_sort_size(text, option, nullptr);
}

std::uint64_t parse_byte_count(const std::string& text, const std::string& option) {
  std::size_t end = 0;
  const std::uint64_t value = leading_number(text, option, end);
  std::uint64_t bytes = value;
  if (end + 1 == text.size() && suffix_power(text[end]) >= 0) {
    bytes = scale(value, suffix_power(text[end]), option, text);
  } else if (end != text.size()) {
    bad_size(option, text, "expected a byte count such as 8, 4096 or 4K");
  }
  if (bytes == 0) bad_size(option, text, "must be positive");
  return bytes;
}

std::uint64_t default_memory_bytes() {
  return std::max<std::uint64_t>(io::usable_memory_bytes() / 2, std::uint64_t{64} << 20);
}

std::optional<std::uint64_t> parse_unsigned(const std::string& text, int base) {
  if (text.empty() || text[0] == '-' || text[0] == '+' || std::isspace(static_cast<unsigned char>(text[0]))) {
    return std::nullopt;
  }
  std::size_t used = 0;
  try {
    const std::uint64_t value = std::stoull(text, &used, base);
    if (used == text.size()) return value;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

}  // namespace extshuffle::cli
