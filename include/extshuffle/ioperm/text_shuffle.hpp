// The shuffle of framed records, of every framing: lines, CSV records,
// TFRecord frames, tar samples ("text" in the names here covers them all;
// docs/conventions.md, Record formats). The same canonical plan as fixed-size records, so N lines
// are put in the order P(seed, N) that N fixed-size records would take; only
// the way bytes move differs. Records are found by their framing
// (formats/record_syntax.hpp); each in-memory shuffle permutes record indices
// and gathers the bytes; buckets in scratch space have a region of their
// expected size plus overflow extents, since their sizes are not known in
// advance.
#pragma once

#include <cstdint>
#include <optional>

#include "extshuffle/device/host_memory.hpp"
#include "extshuffle/ioperm/fixed_size_shuffle.hpp"
#include "extshuffle/io/byte_extents.hpp"
#include "extshuffle/io/mapped_bytes.hpp"
#include "extshuffle/formats/record_syntax.hpp"

namespace extshuffle::io {
class BlockFile;
}

namespace extshuffle::ioperm {

// The records of the input: `bytes` bytes at `offset` of `file`, and a
// terminator the last record lacks when `add_terminator`.
struct TextInput {
  io::BlockFile* file = nullptr;
  std::uint64_t offset = 0;
  std::uint64_t bytes = 0;
  bool add_terminator = false;
  // The input's longest record (the counting pass finds it; 0: unknown),
  // which decides whether chunks can be shuffled in memory.
  std::uint64_t longest_record_bytes = 0;
};

// Smallest --memory for `records` variable-size records under `constants`
// when they do not fit in it (about 4.6 MiB for two levels with the shipped
// L and F, 4 MiB more a level).
std::uint64_t minimum_memory_bytes_text(const core::PlanConstants& constants, std::uint64_t records,
                                            std::uint64_t longest_record_bytes, std::uint64_t record_bytes = 0);

// Where the walk would run each node, computed without IO: the run's
// own decisions (node_path.hpp), for nodes whose bytes vary about their
// share of the input by the records' `record_bytes_variance` (bytes^2).
Schedule plan_schedule_text(std::uint64_t records, std::uint64_t bytes, std::uint64_t longest_record_bytes,
                                const TextOptions& options, double record_bytes_variance = 0);

// Shuffles the `records` records of `input` and hands the output to `sink`
// in order. A record larger than what the budget leaves for it throws
// InputError; an input holding other than `records` records (it changed
// since they were counted) throws InputError. Scratch space from
// `scratch_offset` up holds the buckets.
WalkStats shuffle_text(const TextInput& input, std::uint64_t records, io::BlockFile& scratch,
                               std::uint64_t scratch_offset, const TextOptions& options, const OutputSink& sink);
// Whether one input of `input_bytes` bytes is mapped under a budget of
// `budget_bytes` (text: while it is counted; fixed-size records: a file of
// their own): when it takes under 95% of the budget (the rest is the least
// its workspace in RAM can need).
bool maps_input(std::uint64_t input_bytes, std::uint64_t budget_bytes);

// The same for records anywhere: `data` holds the `records` text records,
// each whole and terminated, possibly across several files (inputs
// concatenated, with terminators in memory where an input lacked its last),
// the longest of `longest_record_bytes` (0: unknown).
// With `mapped_records`, the same records are also in memory, mapped while they were
// counted (dataset/input_layout.hpp): a run in RAM uses them where they lie,
// its arena holding only their workspace, so the input is read once and held
// once; a larger run unmaps them first (they would hold memory beside its
// arena) and reads `data`.
struct MappedRecords {
  std::optional<io::MappedBytes> mapped;
  io::ByteExtents records;  // one extent in memory, inside `mapped`
};
WalkStats shuffle_text(const io::ByteExtents& data, std::uint64_t records, std::uint64_t longest_record_bytes,
                       io::BlockFile& scratch, std::uint64_t scratch_offset, const TextOptions& options,
                       const OutputSink& sink, MappedRecords* mapped_records = nullptr);

}  // namespace extshuffle::ioperm
