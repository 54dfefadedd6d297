// shuf's -r/--repeat: records drawn with replacement, K of them with -n K,
// an endless stream without (it ends when the output's reader goes away:
// io::BrokenPipe, or when the output's disk is full). Draw j outputs record
// Stream(seed, sequence_address(kRepeatDraw, j)).next_below(N): a function
// of the seed, N and j alone, so the output never depends on --memory,
// --threads or how the records are fetched, and -n K+1 only appends to -n K.
// Runs without --repeat are untouched by it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dataset/sharded_output.hpp"
#include "extshuffle/dataset/file_infos.hpp"
#include "extshuffle/modes/mode_options.hpp"
#include "extshuffle/modes/run_stats.hpp"

namespace extshuffle::modes {

// The index (< n, or any 64-bit number when n is 2^64, given as last_index
// UINT64_MAX) of draw j. Cost: one Philox call (rarely two).
std::uint64_t repeat_draw(std::uint64_t seed, std::uint64_t j, std::uint64_t last_index);

// What a run of -r read, as the manifest records a shuffle's input.
struct InputDescription {
  std::vector<InputFileInfo> inputs;
  std::string format;  // dataset::format_name()
};

// Runs -r (options.input.repeat) on -e/-i items or on `input`:
// fixed-size records and .npy rows (the output header gives K rows; an
// endless .npy is a usage error) fetched by offset, text records and
// TFRecord frames through a TextRecordIndex (text_record_index.hpp), the
// header of CSV/TSV once on top. Records stay in RAM when they fit in half
// of --memory, else each draw is one read. An input with no records is an
// InputError ("no records to repeat") unless -n 0. `described`: the input
// read and its format, for the manifest, as a shuffle records them (left
// empty for -e/-i items). Throws like run().
RunStats run_repeat(const ModeSlices& options, const std::string& input, dataset::ShardedOutput& output,
                    InputDescription& described);

}  // namespace extshuffle::modes
