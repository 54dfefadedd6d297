// `extshuffle -i LO-HI -o order.npy`: the order written as a uint64 .npy
// array, for data loaders that prefer a file to a list of lines
// (docs/cli.md, "-i ranges").
#pragma once

#include <cstdint>
#include <string>

#include "extshuffle/modes/mode_options.hpp"

namespace extshuffle::modes {

// Whether the run writes -i's numbers as .npy: -i (not -e, not -r) and an
// output named *.npy. Throws UsageError for -e or -z with such an output.
bool writes_order_npy(const ModeSlices& options, const std::string& output);

// The header of a version 1.0 .npy of `count` little-endian uint64
// (descr '<u8', C order, shape (count,)), padded to 64 bytes as numpy does.
std::string order_npy_header(std::uint64_t count);

}  // namespace extshuffle::modes
