// What the dataset room is told of a Job's options (docs/conventions.md,
// Rooms): how its inputs are read, and how the output's files are cut. The
// driver builds both from the Job's options (driver/job_slices.hpp); the
// dataset room sees nothing else of them.
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
  bool repeat = false;             // --repeat: records are drawn by number, which a tar archive's samples cannot be
};

// How a dataset's output is cut into files (docs/cli.md "Datasets"). With
// any of these, each dataset's output is a pattern holding {split},
// {shard}, {shards} (output_parts.hpp).
struct OutputOptions {
  std::vector<SplitPart> splits;  // --split, in order; empty: one output
  std::uint64_t shard_count = 0;  // --shards K; 0: not given
  std::uint64_t shard_bytes = 0;  // --shard-size: bytes of a shard's records at most; 0: not given
  bool clean = false;  // --clean: the Job's commit removes stale pieces (stale_pieces.hpp) once the files are in place
};

}  // namespace extshuffle::dataset
