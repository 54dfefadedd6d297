// Where step 3 of a split puts its slices (Gustedt's IOPerm, docs/conventions.md, The walk):
// the buckets of the local bucket store, or, under MPI, the ranks that own
// them (src/mpi). PlanWalk::scatter_chunks writes through this interface and
// never learns which.
#pragma once

#include <cstdint>

#include "extshuffle/io/bucket_store.hpp"
#include "extshuffle/io/byte_sink.hpp"

namespace extshuffle::ioperm {

class BucketTargets {
 public:
  virtual ~BucketTargets() = default;
  // Bucket j's bytes, appended in the order of the plan. The scatter uses
  // each j from one thread at a time, different j from different threads.
  virtual io::ByteSink& bucket(std::uint64_t j) = 0;
  // On the driving thread, after the slices of each group of chunks (or of
  // each window of a chunk larger than memory): what was appended so far may
  // move on (MPI exchanges a round here). Returns the bytes written to
  // storage since the last call, for --stats.
  virtual std::uint64_t group_done() = 0;
};

// The buckets of one split in the local bucket store.
class LocalBuckets final : public BucketTargets {
 public:
  explicit LocalBuckets(io::BucketStore::Split& split) : split_(split) {}
  io::ByteSink& bucket(std::uint64_t j) override { return split_.writer(j); }
  std::uint64_t group_done() override { return split_.take_written_bytes(); }

 private:
  io::BucketStore::Split& split_;
};

}  // namespace extshuffle::ioperm
