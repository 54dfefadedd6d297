#include "received_buckets.hpp"

#include <algorithm>
#include <span>
#include <vector>

#include "extshuffle/io/crc32c.hpp"

namespace extshuffle::mpi {

ReceivedBuckets::ReceivedBuckets(io::BucketStore& store, const Distribution& d, int rank,
                                 const ioperm::DistributedWalk& walk, std::uint64_t data_bytes, std::uint32_t tag_width,
                                 std::uint64_t output_records, std::byte* buffers, std::uint64_t buffer_bytes)
    : first_(d.first_bucket(rank)),
      end_(d.end_bucket(rank)),
      ranks_(d.ranks),
      tag_width_(tag_width),
      output_records_(output_records) {
  const std::uint64_t n = d.root.records, pairs = ReceivedBuckets::pairs(d, rank);
  std::vector<std::uint64_t> region_bytes(pairs);
  std::unique_ptr<bool[]> pair_kept(new bool[pairs]);
  kept_.reset(new bool[end_ - first_]);
  for (std::uint64_t j = first_; j < end_; ++j) {
    kept_[j - first_] = core::bucket_first(n, d.buckets, j) < output_records;
    for (int s = 0; s < ranks_; ++s) {
      region_bytes[pair(s, j)] = walk.bucket_region_bytes(data_bytes, n, d.sent_by(s, j), tag_width);
      pair_kept[pair(s, j)] = kept_[j - first_];
    }
  }
  split_ = std::make_unique<io::BucketStore::Split>(store, region_bytes, std::span<const bool>(pair_kept.get(), pairs),
                                                     walk.buckets_may_overflow(), buffers, buffer_bytes);
}

// With the CRC-32C its bytes must have where a pair holds bytes of an
// earlier run (resume()): the pairs' CRCs one after the other, checked as
// step 4 reads the bucket (as extshuffle's buckets are).
io::ByteExtents ReceivedBuckets::bucket(std::uint64_t j) const {
  io::ByteExtents all;
  bool inherited = false;
  for (int s = 0; s < ranks_; ++s) {
    const io::ByteExtents stream = split_->checked_bucket(pair(s, j));
    inherited = inherited || stream.crc32c.has_value();
    for (const io::Extent& e : stream.extents) all.append(e);
  }
  if (inherited) {
    std::uint32_t crc = io::kCrc32cStart;
    for (int s = 0; s < ranks_; ++s) {
      crc = io::crc32c_concat(crc, split_->checksum(pair(s, j)), split_->bucket(pair(s, j)).bytes);
    }
    all.crc32c = crc;
  }
  return all;
}

// Their extents only: step 4 checks a group bucket by bucket (bucket()).
io::ByteExtents ReceivedBuckets::buckets(std::uint64_t first, std::uint64_t end) const {
  io::ByteExtents all;
  for (std::uint64_t j = first; j < end; ++j) {
    for (int s = 0; s < ranks_; ++s) {
      for (const io::Extent& e : split_->bucket(pair(s, j)).extents) all.append(e);
    }
  }
  return all;
}

void ReceivedBuckets::discard(std::uint64_t j) {
  if (kept_for_resume_) return;
  for (int s = 0; s < ranks_; ++s) split_->discard(pair(s, j));
}

void ReceivedBuckets::keep_for_resume() {
  split_->keep_checksums();
  kept_for_resume_ = true;
}

void ReceivedBuckets::resume(const io::SplitState& state) {
  keep_for_resume();
  split_->resume(state);
}

}  // namespace extshuffle::mpi
