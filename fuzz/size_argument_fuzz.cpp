// libFuzzer target: the size arguments (tools/cli/size_argument.cpp):
// --memory with sort's syntax and --record-size. Any text must give a
// positive byte count or UsageError; anything else is a bug.
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "extshuffle/errors.hpp"
#include "cli/size_argument.hpp"

namespace {

void check(bool condition) {
  if (!condition) std::abort();
}

bool all_digits(const std::string& text) {
  if (text.empty()) return false;
  for (char c : text) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace extshuffle::cli;
  const std::string text(reinterpret_cast<const char*>(data), size);
  // Two plausible machines: 16 GiB, and 1 TiB (percentages near 64 bits).
  for (const std::uint64_t physical : {std::uint64_t{16} << 30, std::uint64_t{1} << 40}) {
    try {
      const std::uint64_t bytes = parse_memory_size(text, physical);
      check(bytes > 0);
      if (!text.empty() && text.back() == '%') check(bytes <= physical);
    } catch (const extshuffle::UsageError&) {
    }
  }
  try {
    const std::uint64_t bytes = parse_byte_count(text, "--record-size");
    check(bytes > 0);
    if (all_digits(text) && text.size() < 19) check(bytes == std::stoull(text));
  } catch (const extshuffle::UsageError&) {
  }
  return 0;
}
