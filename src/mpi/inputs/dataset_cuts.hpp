// Where a dataset of files (dataset_files.hpp) is cut among the ranks by
// bytes (docs/mpi.md, "How the work is shared"): the byte offsets of given
// records, a spread root's held records cut by bytes, and a root's chunks
// shared by bytes. Records of one size by arithmetic; framed records
// found by the holders of the files where the cuts fall (a read of the
// file to the cut, an archive's from its index), the same on every rank.
#pragma once

#include <cstdint>
#include <vector>

#include "dataset_files.hpp"
#include "extshuffle/core/plan.hpp"
#include "extshuffle/mpi/communicator.hpp"

namespace extshuffle::mpi {

// The byte offsets in the dataset's data of the data records `indices`
// (sorted, each at most files.records; records itself is the end), the same
// on every rank: fixed-size records by arithmetic, framed records found by
// the holder of their file, which reads it to the last one it is asked for.
// Throws RankFailure on every rank. Collective.
std::vector<std::uint64_t> record_byte_offsets(DatasetFiles& files, const std::vector<std::uint64_t>& indices,
                                               Communicator& comm);

// A spread root's held records cut by bytes (distribution.hpp,
// spread_root): rank r holds the data records that start in bytes
// [B r / P, B (r + 1) / P) of the dataset's B bytes of data, so that its
// share of the bytes is off by less than one record. Text records are
// found by the holders of the files those bytes lie in (a read of each such
// file to its last such byte; an archive's frames from its index).
struct HeldSplit {
  std::vector<std::uint64_t> records;  // ranks + 1 entries: rank r holds [records[r], records[r + 1])
  std::vector<std::uint64_t> bytes;    // where they start in the data; the last entry is B
  // Text chunks shared by bytes (chunk_split_by_bytes): where the records
  // that start in each rank's 1/P of the data begin, the bytes it reads
  // for the run (its chunks' other bytes come from their readers,
  // stage_input); empty where the chunks' bytes are each rank's reads.
  std::vector<std::uint64_t> read_bytes;
};
HeldSplit held_records_by_bytes(DatasetFiles& files, int ranks, Communicator& comm);

// A root of many chunks (distribution.hpp, not spread_root) shared by
// bytes: rank r scatters the chunks from the one that holds the first
// record starting at or after byte B r / P of the data, so that its share
// is off by less than a chunk and a record (docs/mpi.md, "How the work is
// shared"); records of one size by count, which is the same. Writes the
// ranks' first chunks to `chunk_begin` (ranks + 1 entries, as
// Distribution::chunk_begin) and returns their first records and bytes.
// Text: the holders of the files where the cuts fall find both in one
// read of the file to the cut (an archive's from its index); a chunk that
// began in an earlier file, in a read of that file to it. Collective.
HeldSplit chunk_split_by_bytes(DatasetFiles& files, const core::PlanConstants& constants, int ranks,
                               std::vector<std::uint64_t>& chunk_begin, Communicator& comm);

}  // namespace extshuffle::mpi
