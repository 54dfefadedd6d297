// libFuzzer target: the .npy header parser (src/formats/npy_header.cpp), which
// reads untrusted bytes from the start of the user's file. Any input must end
// in a parsed header that is consistent with the bytes, or in InputError;
// anything else (another exception, a sanitizer report, a stack overflow) is
// a bug.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "extshuffle/errors.hpp"
#include "extshuffle/formats/npy_header.hpp"

namespace {

void check(bool condition) {
  if (!condition) std::abort();
}

void parse(std::string_view head) {
  using namespace extshuffle::formats;
  (void)parse_npy_header_size(head);
  try {
    const NpyHeader h = parse_npy_header(head, "fuzz");
    check(h.header_bytes <= head.size());
    check(h.major_version >= 1 && h.major_version <= 3);
    check(!h.shape.empty() && h.rows == h.shape[0]);
    std::uint64_t row_bytes = h.item_bytes;
    for (std::size_t d = 1; d < h.shape.size(); ++d) row_bytes *= h.shape[d];
    check(row_bytes == h.row_bytes);
    check(h.row_bytes == 0 || h.rows <= UINT64_MAX / h.row_bytes);
  } catch (const extshuffle::InputError&) {
  }
}

}  // namespace

// The first byte picks how the rest is used: as a whole file head, or as the
// header dict alone behind a valid version 1.0 prefix (so that mutations of
// the dict are not wasted on an inconsistent length field).
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
  if (data[0] & 1) {
    if (rest.size() > 0xFFFF) return 0;
    std::string head("\x93NUMPY\x01\x00", 8);
    head += static_cast<char>(rest.size() & 0xFF);
    head += static_cast<char>(rest.size() >> 8);
    head += rest;
    parse(head);
  } else {
    parse(rest);
  }
  try {
    (void)extshuffle::formats::npy_item_bytes(rest, "fuzz");
  } catch (const extshuffle::InputError&) {
  }
  return 0;
}
