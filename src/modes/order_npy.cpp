#include "order_npy.hpp"

#include "extshuffle/errors.hpp"

namespace extshuffle::modes {

bool writes_order_npy(const ModeSlices& options, const std::string& output) {
  if (!output.ends_with(".npy")) return false;
  if (options.mode.echo) throw UsageError("-o " + output + ": a .npy output holds -i's numbers, not -e's items");
  if (options.input.zero_terminated) throw UsageError("-o " + output + ": -z ends lines, a .npy output has none");
  return options.mode.integer_range && !options.input.repeat;
}

std::string order_npy_header(std::uint64_t count) {
  std::string dict = "{'descr': '<u8', 'fortran_order': False, 'shape': (" + std::to_string(count) + ",), }";
  const std::size_t fixed = 10;  // magic (6), version (2), header length (2)
  while ((fixed + dict.size() + 1) % 64 != 0) dict += ' ';
  dict += '\n';
  std::string header("\x93NUMPY\x01\x00", 8);
  header += static_cast<char>(dict.size() & 0xFF);
  header += static_cast<char>(dict.size() >> 8);
  return header + dict;
}

}  // namespace extshuffle::modes
