// The dataset room's slices of a Job's options (docs/conventions.md, Rooms):
// how its inputs are read, and how many records go out and into which files.
// The Job holds both (job.hpp, JobOptions::input and ::output); the dataset
// room reads them, and the run's shared part (ioperm/run_options.hpp), by
// const reference, and sees nothing else of the Job.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "extshuffle/formats/format_detection.hpp"
#include "extshuffle/dataset/split_part.hpp"

namespace extshuffle::dataset {

// How a dataset's inputs are read: their format, where their records end,
// and what the counting pass digests or refuses.
struct DatasetOptions {
  formats::Format format = formats::Format::kAuto;  // --format; kAuto: detected (formats/format_detection.hpp)
  std::size_t record_size = 0;     // bytes per fixed-size record; 0: not given (text, or a .npy's rows)
  bool zero_terminated = false;    // -z: lines end with NUL
  bool ignore_zeros = false;       // --ignore-zeros: a tar archive's zero blocks are read through, not its end
  std::int64_t header_lines = -1;  // --header[=N] kept on top; -1: the format's default (1 for CSV/TSV, else 0)
  bool skip_empty = false;         // --skip-empty: blank lines are not records
  bool verify = false;             // --verify: every record read is digested (verification.hpp)
  // -r/--repeat: records are drawn by number with replacement
  // (modes/repeat_run.hpp), which a tar archive's samples cannot be.
  bool repeat = false;
};

// How many records a dataset's output takes, and how it is cut into files
// (docs/cli.md "Datasets"). With splits or shards, each dataset's output is a
// pattern holding {split}, {shard}, {shards} (output_parts.hpp).
struct OutputOptions {
  // -n: output only the first K records of the permutation (with --repeat:
  // K draws; UINT64_MAX and --repeat: an endless stream).
  std::uint64_t head_count = UINT64_MAX;
  std::vector<SplitPart> splits;  // --split, in order; empty: one output
  std::uint64_t shard_count = 0;  // --shards K; 0: not given
  std::uint64_t shard_bytes = 0;  // --shard-size: bytes of a shard's records at most; 0: not given
  bool clean = false;  // --clean: the Job's commit removes stale pieces (stale_pieces.hpp) once the files are in place
};

}  // namespace extshuffle::dataset
