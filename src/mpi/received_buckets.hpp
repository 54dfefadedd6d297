// The buckets a rank owns, as their bytes arrive from every rank (Gustedt's
// ParPerm, the receiving side): one writer of the io layer's bucket store per
// (source rank, bucket) pair, so that each rank's slices land in a region of
// their own in this rank's scratch space, in the order they were sent, while
// the other ranks' slices arrive beside them. Bucket j is then the pairs
// (0, j), (1, j), ... read in rank order, which is chunk order: the bytes the
// single-machine driver's bucket j holds. For fixed-size records each pair's
// region is exact (the exchanged counts say how many records it gets) and the
// pairs of a bucket are adjacent, so a bucket reads back as one extent; text
// records get a region of their expected size plus slack, and overflow
// extents, as the walk's buckets do.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "distribution.hpp"
#include "extshuffle/ioperm/distributed_walk.hpp"
#include "extshuffle/ioperm/stored_buckets.hpp"
#include "extshuffle/io/bucket_store.hpp"

namespace extshuffle::mpi {

class ReceivedBuckets final : public ioperm::StoredBuckets {
 public:
  // Buckets [d.first_bucket(rank), d.end_bucket(rank)) of the root, whose
  // data are `data_bytes` bytes; a bucket past the first `output_records`
  // positions (-n) is not stored. Each record arrives behind a position
  // tag of `tag_width` bytes when the split is routed (0: none). Two
  // buffers of `buffer_bytes` per pair, carved from `buffers` (2 x pairs() x
  // buffer_bytes bytes).
  ReceivedBuckets(io::BucketStore& store, const Distribution& d, int rank, const ioperm::DistributedWalk& walk,
                  std::uint64_t data_bytes, std::uint32_t tag_width, std::uint64_t output_records,
                  std::byte* buffers, std::uint64_t buffer_bytes);

  static std::uint64_t pairs(const Distribution& d, int rank) {
    return (d.end_bucket(rank) - d.first_bucket(rank)) * static_cast<std::uint64_t>(d.ranks);
  }
  std::uint64_t first() const { return first_; }
  std::uint64_t end() const { return end_; }
  bool kept(std::uint64_t bucket) const { return kept_[bucket - first_]; }
  std::uint64_t output_records() const { return output_records_; }
  std::uint32_t tag_width() const { return tag_width_; }

  // Where rank `source`'s slices of `bucket` go, in order.
  io::BucketWriter& writer(int source, std::uint64_t bucket) { return split_->writer(pair(source, bucket)); }
  // Bytes handed to scratch since the last call (for --stats).
  std::uint64_t take_written_bytes() { return split_->take_written_bytes(); }
  // After the last round: flushes every writer and waits.
  std::uint64_t finish() { return split_->finish(); }
  // Bucket j's bytes in chunk order (after finish()), and their count;
  // after resume(), the CRC-32C they must have (damage: Error,
  // io/scratch_damage.hpp, as they are read).
  io::ByteExtents bucket(std::uint64_t j) const override;
  io::ByteExtents buckets(std::uint64_t first, std::uint64_t end) const override;
  // Drops bucket j's bytes from scratch space once it has run (not with
  // keep_for_resume()).
  void discard(std::uint64_t j) override;

  // --checkpoint (docs/mpi.md "A killed job"), before the first append:
  // every pair's CRC-32C kept, and no bucket's space given back, as a
  // rerun resumed after the exchange reads every bucket again.
  void keep_for_resume();
  // After finish(): the pairs as they stand. Throws IoError.
  io::SplitState checkpoint() { return split_->checkpoint(); }
  // Before the first append: the pairs go on from `state` (a checkpoint()
  // of a split laid out alike: the rounds resumed after it, or none left);
  // each bucket holding bytes of `state` is checked against its pairs'
  // CRC-32C as step 4 reads it (bucket()). Throws Error (laid out
  // otherwise).
  void resume(const io::SplitState& state);

 private:
  std::uint64_t pair(int source, std::uint64_t bucket) const {
    return (bucket - first_) * static_cast<std::uint64_t>(ranks_) + static_cast<std::uint64_t>(source);
  }
  std::uint64_t first_, end_;
  int ranks_;
  std::uint32_t tag_width_;
  std::uint64_t output_records_;
  std::unique_ptr<bool[]> kept_;
  std::unique_ptr<io::BucketStore::Split> split_;
  bool kept_for_resume_ = false;
};

}  // namespace extshuffle::mpi
