// The IO and the checks of a batch of records read by number
// (dataset/indexed_records.hpp): reads sorted by offset, neighbours within
// kJoinGapBytes joined into one preadv (the gap read into a scratch block),
// then each record checked against what its index says it is.
#pragma once

#include <cstddef>
#include <span>
#include <string>

#include "extshuffle/dataset/indexed_records.hpp"

namespace extshuffle::dataset {

// Reads of one file closer than this are one preadv: a system call costs
// about what copying 4 KiB costs, and the page cache holds the gap anyway.
inline constexpr std::uint64_t kJoinGapBytes = 4096;

// Performs `reads` (of the file `fd`, named `path` in messages, sorted by
// offset) into their segments in `targets` or into `scratch`. Throws
// InputError when the file ends before a read (it changed since its index
// was made), IoError.
void read_runs(int fd, const std::string& path, std::span<const ReadPlan::Read* const> reads,
               std::span<std::byte* const> targets, std::byte* scratch);

// Checks one record after its reads (ReadPlan::Check): its terminator, its
// TFRecord frame's length and CRCs, its tar header's checksum; adds the
// terminator a raw last line lacks. Throws InputError naming the input and
// the record.
void check_read(const IndexedInput& input, const ReadPlan::Check& check, const ReadPlan& plan,
                std::span<std::byte* const> targets, const std::byte* scratch);

}  // namespace extshuffle::dataset
