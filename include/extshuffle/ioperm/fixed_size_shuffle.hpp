// The shuffle of fixed-size records (docs/conventions.md, The walk): maps the canonical plan onto memory
// and disk. A node whose records fit in the memory budget runs in RAM; a
// larger one streams its chunks through the shuffle into per-bucket write
// buffers on scratch space, then runs each bucket in turn. The output is the
// same bytes as the in-memory reference walk (ioperm/reference_shuffle) for any budget.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "extshuffle/core/plan.hpp"
#include "extshuffle/ioperm/shuffle_options.hpp"

namespace extshuffle::io {
class BlockFile;
struct ByteExtents;
}

namespace extshuffle::ioperm {

// What the walk did, for --stats and --dry-run.
struct WalkStats {
  std::uint64_t bytes_read = 0;     // input and scratch
  std::uint64_t bytes_written = 0;  // scratch and output
  std::uint32_t passes = 0;         // passes through disk on the deepest path (1 = in RAM)
  std::uint64_t nodes_on_disk = 0;
  std::uint64_t nodes_routed = 0;
  std::uint64_t nodes_into_windows = 0;   // of the routed: their leaves' windows written by them
  std::uint64_t leaf_orders_on_disk = 0;  // of those: the leaves' orders through scratch space
  std::uint64_t nodes_in_windows = 0;
  std::uint64_t nodes_in_memory = 0;
  double seconds_reading = 0, seconds_shuffling = 0, seconds_scattering = 0, seconds_writing = 0;
  std::uint64_t huge_page_bytes = 0;  // RunStats::huge_page_bytes
};

// Smallest --memory the walk accepts for `records` records of
// `record_size` bytes: at least 4 KiB, and what the deepest routed split or
// a leaf in windows needs (about 4.6 MiB for two levels with the shipped L
// and F and small records, 4 MiB more a level).
inline constexpr std::uint64_t kMinMemoryBytes = std::uint64_t{4} << 10;
std::uint64_t minimum_memory_bytes(const core::PlanConstants& constants, std::size_t record_size,
                                   std::uint64_t records);

// Where the walk would run each node, computed without IO.
struct Schedule {
  std::uint32_t levels = 0;
  std::uint32_t passes = 0;
  std::uint64_t nodes_on_disk = 0;     // splits streamed through scratch space
  std::uint64_t nodes_routed = 0;      // of which routed record by record (chunks larger than memory)
  std::uint64_t nodes_into_windows = 0;   // of those, routing into their leaves' output windows
  std::uint64_t leaf_orders_on_disk = 0;  // of those, with the leaves' orders through scratch space
  std::uint64_t nodes_in_windows = 0;  // leaves larger than memory, placed window by window
  std::uint64_t nodes_in_memory = 0;
  std::uint64_t bytes_read = 0;
  std::uint64_t bytes_written = 0;
  std::uint64_t peak_memory_bytes = 0;  // the largest arena any node uses
};
Schedule plan_schedule(std::uint64_t records, const WalkOptions& options);

using OutputSink = std::function<void(const std::byte* data, std::size_t bytes)>;

// Shuffles the `records` records stored at `input_offset` of `input` and
// hands the output to `sink` in order. Scratch regions come from `scratch`
// starting at `scratch_offset` (the caller may keep data before it). Throws
// IoError on IO failures and std::invalid_argument on a budget below
// kMinMemoryBytes.
WalkStats shuffle_fixed_size(io::BlockFile& input, std::uint64_t input_offset, std::uint64_t records,
                               io::BlockFile& scratch, std::uint64_t scratch_offset,
                               const WalkOptions& options, const OutputSink& sink);
// The same for records anywhere: `data` holds the `records` records one
// after the other, possibly across several files (inputs concatenated).
// With `mapped_records` (text_shuffle.hpp), the same records are also mapped: a run
// in RAM whose way can read them there does, without a copy of its own
// (the budget still counts them: they are resident while read); any other
// run unmaps them first and reads `data`.
struct MappedRecords;
WalkStats shuffle_fixed_size(const io::ByteExtents& data, std::uint64_t records, io::BlockFile& scratch,
                             std::uint64_t scratch_offset, const WalkOptions& options, const OutputSink& sink,
                             MappedRecords* mapped_records = nullptr);

}  // namespace extshuffle::ioperm
