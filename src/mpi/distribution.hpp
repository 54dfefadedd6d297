// Who does what in a distributed run: Gustedt's ParPerm over the root split
// of the canonical plan (docs/design.md, "Several machines"). Rank r scatters
// the root's chunks [chunk_begin[r], chunk_begin[r + 1]) (about 1/P of the
// data's bytes) and owns 1/P of its buckets, [bucket_begin[r],
// bucket_begin[r + 1]); before any
// record moves, each rank
// draws the column sums of its own chunks' rows (RecMat: its two boundary
// paths, O(log R) draws) and the ranks exchange them, so that every receiver
// knows how many records each rank sends to each of its buckets, and where
// in the bucket they go, before the first byte arrives.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "extshuffle/core/plan.hpp"
#include "extshuffle/core/recursive_matrix.hpp"
#include "extshuffle/mpi/communicator.hpp"

namespace extshuffle::mpi {

struct Distribution {
  core::Node root;
  std::uint64_t chunks = 0;   // R, the root's chunks
  std::uint64_t buckets = 0;  // p, the root's buckets
  int ranks = 1;
  std::vector<std::uint64_t> chunk_begin;   // ranks + 1 entries
  std::vector<std::uint64_t> bucket_begin;  // ranks + 1 entries: p x r / P
  // sent[s * buckets + j]: records rank s's chunks give bucket j.
  std::vector<std::uint64_t> sent;
  std::uint64_t splits_drawn = 0;  // by this rank, for its column sums

  int owner(std::uint64_t bucket) const;
  std::uint64_t first_bucket(int rank) const { return bucket_begin[rank]; }
  std::uint64_t end_bucket(int rank) const { return bucket_begin[rank + 1]; }
  std::uint64_t sent_by(int rank, std::uint64_t bucket) const { return sent[rank * buckets + bucket]; }
};

// Rank `rank`'s first item of an even split of `count` items (bytes,
// records, chunks or buckets) over `ranks` ranks: count x rank / ranks.
std::uint64_t range_begin(std::uint64_t count, int rank, int ranks);

// The even split of `count` items over `ranks` ranks: range_begin of each
// rank, ranks + 1 entries (R chunks of fixed-size records: equal bytes per
// rank; the root's p buckets: each rank owns 1/P of them).
std::vector<std::uint64_t> even_split(std::uint64_t count, int ranks);

// The first record of each rank's chunks, as `chunk_begin` (ranks + 1
// entries) gives them out: ranks + 1 entries, the last N (`records`).
std::vector<std::uint64_t> chunk_first_records(const std::vector<std::uint64_t>& chunk_begin, std::uint64_t records,
                                               const core::PlanConstants& constants);

// Below this many chunks a rank, whole chunks cannot share a root out
// evenly enough: a rank scatters whole chunks, and its share may be off by
// up to a chunk (fixed-size records: even_split's rounding; text: a
// rank takes the chunks that start in its byte range, so one rank may have
// one chunk more and the next one less); at 8 chunks a rank, one chunk is
// 12.5% of a share.
inline constexpr std::uint64_t kSpreadChunksPerRank = 8;

// Whether a root of `records` records is spread over `ranks` ranks (every
// rank 1/P of its bytes read and written; spread_root.hpp)
// rather than scattered by whole chunks: on more than one rank, a leaf root
// (N <= L, no chunks), and a root of two plan levels (every bucket a leaf)
// with fewer than 8 chunks a rank (2 chunks on 4 ranks would leave 2 ranks
// idle, 9 on 4 give one 33% more). The rest are balanced by their chunk
// split, and deeper plans by it too (they have more than F chunks: 1024
// shipped, so spread roots go up to 8P chunks for P <= 128 ranks).
bool spread_root(std::uint64_t records, const core::PlanConstants& constants, int ranks);

// Whether one rank runs the root as extshuffle does (a leaf on a job of one
// rank): its shuffles read all the records from one range of one file, so a
// dataset's records are staged there contiguously.
bool runs_alone(std::uint64_t records, const core::PlanConstants& constants, int ranks);

// The records each rank holds (ranks + 1 entries: rank r holds data records
// [held[r], held[r + 1])): a spread root in even shares N r / P (records of
// one size: 1/P of the bytes; text and datasets cut a spread root by bytes
// instead, text_split.hpp and held_records_by_bytes); any other root by its
// chunks, as even_split gives them out. The last entry is N.
std::vector<std::uint64_t> held_record_split(std::uint64_t records, const core::PlanConstants& constants, int ranks);

// Writes to `out` (p entries) the column sums of rows [first, end) of
// `matrix`: how many records chunks first..end-1 give each bucket, as the
// sums before `end` less those before `first` (two root-to-boundary paths,
// at most 2 x row_tree_depth(R) draws, however many rows lie between).
// Throws as RecursiveMatrix::column_sums_before.
void range_column_sums(core::RecursiveMatrix& matrix, std::uint64_t first, std::uint64_t end,
                       std::span<std::uint64_t> out);

// The distribution of a root of `records` records (not a leaf) whose chunks
// the ranks scatter as `chunk_begin` says. Collective.
Distribution distribute(std::uint64_t seed, std::uint64_t records, const core::PlanConstants& constants,
                        std::vector<std::uint64_t> chunk_begin, Communicator& comm);

}  // namespace extshuffle::mpi
