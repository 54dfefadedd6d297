// Where a text file's records start, found by one read from its first
// record (TFRecord: of the frames' headers alone), in pieces of 8 MiB
// whatever the records' lengths, each record found as formats::scan_record
// finds it (a quoted CSV's state carried across pieces): by their indices
// (where the records a rank holds begin, given their indices), or by bytes
// (which record is the first to start at or after a byte: a rank's held
// records cut by bytes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "extshuffle/formats/record_syntax.hpp"

namespace extshuffle::io {
class BlockFile;
}

namespace extshuffle::mpi {

// Bytes read at a time while looking for record starts (as the counting pass reads).
inline constexpr std::size_t kStartScanPieceBytes = std::size_t{8} << 20;

// Where the text records `wanted` (indices from 0, sorted, each below the
// number of records there) start among the `bytes` bytes at `first_byte` of
// `file`, as offsets from `first_byte`: read to the last of them. Throws
// InputError when fewer records are there.
// (Tests give tiny pieces, so that scans resume at every kind of place.)
std::vector<std::uint64_t> find_record_starts(io::BlockFile& file, std::uint64_t first_byte, std::uint64_t bytes,
                                              const formats::RecordSyntax& syntax,
                                              const std::vector<std::uint64_t>& wanted,
                                              std::size_t piece_bytes_at_most = kStartScanPieceBytes);

struct RecordStart {
  std::uint64_t index = 0;  // the record's (from 0), or the number of records where none starts
  std::uint64_t byte = 0;   // where it starts, an offset from first_byte (`bytes` where none starts)
};

// For each of `offsets` (sorted, each at most `bytes`), the first of those
// records that starts at or after it: read to the last of them.
std::vector<RecordStart> records_starting_at(io::BlockFile& file, std::uint64_t first_byte, std::uint64_t bytes,
                                             const formats::RecordSyntax& syntax,
                                             const std::vector<std::uint64_t>& offsets,
                                             std::size_t piece_bytes_at_most = kStartScanPieceBytes);

// A chunk's first record among the records there: the index of each is
// counted from `first_index` (its index in the whole data), and chunks
// begin where that is a multiple of `leaf_records`.
struct ChunkStart {
  RecordStart first;        // the first record that starts at or after the offset, as records_starting_at finds it
  RecordStart chunk;        // the first record of its chunk, when it is there (index <= first.index)
  bool chunk_here = false;  // false: the chunk began before these records
};

// For each of `offsets` (sorted, each at most `bytes`), the first record
// that starts at or after it and the first record of its chunk, in the
// same read as records_starting_at's (the chunk's first record lies
// before). The end (index: the number of records) counts as a record,
// the one after the last.
std::vector<ChunkStart> chunks_starting_at(io::BlockFile& file, std::uint64_t first_byte, std::uint64_t bytes,
                                           const formats::RecordSyntax& syntax,
                                           const std::vector<std::uint64_t>& offsets, std::uint64_t first_index,
                                           std::uint64_t leaf_records,
                                           std::size_t piece_bytes_at_most = kStartScanPieceBytes);

}  // namespace extshuffle::mpi
