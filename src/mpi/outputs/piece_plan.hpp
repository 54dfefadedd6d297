// The files a distributed run writes (docs/mpi.md "Shards, splits and the manifest"): the
// output stream, what extshuffle writes to one file, cut into pieces by
// output record index, exactly as extshuffle cuts it
// (dataset/output_parts.hpp: --split ends, --shards near-equal shards,
// --shard-size for fixed-size records a fixed count of records a shard).
// Pure arithmetic, the same on every rank.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "extshuffle/job.hpp"

namespace extshuffle::mpi {

struct Piece {
  std::string path;   // its final name
  std::string split;  // empty without --split
  std::uint64_t shard = 0, shards = 1;
  std::uint64_t first_record = 0, records = 0;  // its range of the output's records
};

struct PiecePlan {
  std::vector<Piece> pieces;  // in output order
  std::uint64_t records = 0;  // the records the pieces take: -n, or where the last split ends
  std::uint64_t left_out = 0;  // records past the last split's end
  bool several_files = false;  // --shards, --shard-size or --split
  std::vector<std::uint64_t> split_ends;  // where each split ends (one split: records)
  // Text cut by --shard-size: `pieces` is empty until the ranks have found
  // where the shards end (byte_cut_pieces.hpp).
  bool cut_by_bytes = false;
  // The piece holding output record `record` (< records); pieces of no
  // records are passed over.
  std::size_t piece_of(std::uint64_t record) const;
};

// The pieces of `output` for `records` output records (-n applied) of
// `record_size` bytes (0: text). Throws UsageError: a bad pattern, --split
// counts beyond the records.
PiecePlan plan_pieces(const JobOptions& options, const std::string& output, std::size_t record_size,
                      std::uint64_t records);

}  // namespace extshuffle::mpi
