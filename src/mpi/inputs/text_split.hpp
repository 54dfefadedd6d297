// The counting pass over text input, split across the ranks (Gustedt's
// ParPerm needs the record count N and each rank's chunks before any
// exchange). Rank r reads bytes [F r / P, F (r + 1) / P) of the F-byte
// input and counts the records that start after it: a record starts at
// byte 0 and after every terminator that ends a record, and belongs to the
// rank in whose range that terminator lies (record 0 to rank 0), which finds
// it without looking past its range. An exclusive sum of the counts gives
// every record its global index, hence the header (the first H records), N
// and the top-level chunks (chunk c = data records [c L, (c + 1) L)): rank r
// scatters the chunks whose first record is its own.
//
// CSV (quoted newlines): whether a terminator ends a record depends on the
// quoting state where the rank's range begins, which only the ranks before
// it know. Each rank scans its range from all four states
// (formats::QuoteState) at once, the scans merging as soon as they agree,
// and the ranks compose their results in rank order: exact for every input,
// including quotes inside unquoted fields, which a parity count of quotes
// would get wrong. Lines, TSV and JSONL count terminators at memchr speed.
//
// The longest record and the sum of the squares of the records' lengths
// (the root's facts, which decide where the walk runs it: node_path.hpp)
// come from the same scan: each rank keeps the lengths of the records
// between two of its record ends (the first H one by one, since which of
// them are header records is known only after the composition), and the
// records that cross a range boundary are measured from the gathered ends.
//
// The result is what the single-machine counting pass (dataset/text_input.cpp)
// finds: the same N, header bytes, missing final terminator, longest record
// and squares (summed in another order: equal up to rounding, exactly for
// sums below 2^53), and the same error for an unterminated quoted field.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "extshuffle/core/plan.hpp"
#include "extshuffle/formats/record_syntax.hpp"
#include "extshuffle/mpi/communicator.hpp"

namespace extshuffle::io {
class BlockFile;
}

namespace extshuffle::mpi {

struct TextSplit {
  std::uint64_t records = 0;       // N: records after the header
  std::uint64_t header_bytes = 0;  // the header records' bytes, at the start of the input
  bool add_terminator = false;     // the input's last record (or header line) lacks its terminator
  std::uint64_t longest_record_bytes = 0;  // the longest record after the header, with its terminator
  double record_bytes_squared = 0;         // the sum of the squares of their lengths
  // P + 1 entries: rank r scatters chunks [chunk_begin[r], chunk_begin[r + 1])
  // of the root, whose bytes are [data_begin[r], data_begin[r + 1]).
  std::vector<std::uint64_t> chunk_begin;
  std::vector<std::uint64_t> data_begin;
  // P + 1 entries: rank r holds data records [held_begin[r], held_begin[r + 1]):
  // a spread root's by bytes (those that start in the rank's counting range),
  // any other root's as its chunks (chunk_begin); they start at byte
  // held_byte_begin[r] (the last entry is the input's size).
  std::vector<std::uint64_t> held_begin;
  std::vector<std::uint64_t> held_byte_begin;
};

// Pieces of a rank's range read at a time, the next while this one is
// scanned (as the single-machine counting pass reads).
inline constexpr std::size_t kTextPieceBytes = std::size_t{8} << 20;

// Splits the `bytes`-byte text input in `file` across the ranks of `comm`.
// `header_records` lines are the header; chunks hold L records (`constants`).
// Throws InputError naming `display_name` for an unterminated quoted field
// (on every rank: the result is collective). Cost per rank: one read of its
// range, and a second look at up to one chunk's records from its start, in
// pieces of `piece_bytes` (tests make them tiny, so that scans resume and
// merge at many piece boundaries); the records whose start it finds in the
// second look (its first chunk's, the data's, each rank's held records')
// are found in one pass. Collective.
TextSplit split_text_input(io::BlockFile& file, std::uint64_t bytes, const formats::RecordSyntax& syntax,
                           std::uint64_t header_records, const core::PlanConstants& constants,
                           const std::string& display_name,
                           Communicator& comm, std::size_t piece_bytes = kTextPieceBytes);

}  // namespace extshuffle::mpi
