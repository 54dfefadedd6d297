// Who does what in a distributed run: Gustedt's ParPerm over the root split
// of the canonical plan (docs/design.md, "Several machines"). Rank r scatters
// the root's chunks [chunk_begin[r], chunk_begin[r + 1]) and owns the same
// share of its buckets, [bucket_begin[r], bucket_begin[r + 1]); before any
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
  std::vector<std::uint64_t> bucket_begin;  // ranks + 1 entries: p x chunk_begin[r] / R
  // sent[s * buckets + j]: records rank s's chunks give bucket j.
  std::vector<std::uint64_t> sent;
  std::uint64_t splits_drawn = 0;  // by this rank, for its column sums

  int owner(std::uint64_t bucket) const;
  std::uint64_t first_bucket(int rank) const { return bucket_begin[rank]; }
  std::uint64_t end_bucket(int rank) const { return bucket_begin[rank + 1]; }
  std::uint64_t sent_by(int rank, std::uint64_t bucket) const { return sent[rank * buckets + bucket]; }
};

// The even split of R chunks (fixed-size records: equal bytes per rank).
std::vector<std::uint64_t> even_chunk_split(std::uint64_t chunks, int ranks);

// The data records each rank holds before the run (ranks + 1 entries: rank r
// holds [entry r, entry r + 1)): a root that is one leaf in even shares of
// records, else the records of the chunks that rank scatters (the even
// chunk split), the last entry `records`.
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
