// Where step 4 of a split reads its buckets back (Gustedt's IOPerm,
// docs/conventions.md, The walk): the local bucket store's split, or, under MPI, the buckets a rank
// received from every rank (src/mpi). PlanWalk::run_buckets reads through
// this interface and never learns which; bucket_targets.hpp is the writing
// side.
#pragma once

#include <cstdint>

#include "extshuffle/io/bucket_store.hpp"
#include "extshuffle/io/byte_extents.hpp"

namespace extshuffle::ioperm {

class StoredBuckets {
 public:
  virtual ~StoredBuckets() = default;
  // Bucket j's bytes, in the order they were appended (with the CRC-32C
  // they must have, where the split keeps one: walk_checkpoint.hpp).
  virtual io::ByteExtents bucket(std::uint64_t j) const = 0;
  // Buckets [first, end) one after the other (one request when adjacent).
  virtual io::ByteExtents buckets(std::uint64_t first, std::uint64_t end) const = 0;
  // Bucket j has run: its bytes may go.
  virtual void discard(std::uint64_t j) = 0;
};

// The buckets of one split in the local bucket store.
class SplitBuckets final : public StoredBuckets {
 public:
  explicit SplitBuckets(io::BucketStore::Split& split) : split_(split) {}
  io::ByteExtents bucket(std::uint64_t j) const override { return split_.checked_bucket(j); }
  io::ByteExtents buckets(std::uint64_t first, std::uint64_t end) const override {
    return split_.buckets(first, end);
  }
  void discard(std::uint64_t j) override { split_.discard(j); }

 private:
  io::BucketStore::Split& split_;
};

}  // namespace extshuffle::ioperm
