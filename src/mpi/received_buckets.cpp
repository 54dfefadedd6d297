#include "received_buckets.hpp"

#include <algorithm>
#include <span>
#include <vector>

#include "extshuffle/errors.hpp"
#include "extshuffle/io/aligned_buffer.hpp"
#include "extshuffle/io/crc32c.hpp"
#include "extshuffle/io/scratch_damage.hpp"

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

io::ByteExtents ReceivedBuckets::bucket(std::uint64_t j) const {
  io::ByteExtents all;
  for (int s = 0; s < ranks_; ++s) {
    for (const io::Extent& e : split_->bucket(pair(s, j)).extents) all.append(e);
  }
  return all;
}

io::ByteExtents ReceivedBuckets::buckets(std::uint64_t first, std::uint64_t end) const {
  io::ByteExtents all;
  for (std::uint64_t j = first; j < end; ++j) {
    for (const io::Extent& e : bucket(j).extents) all.append(e);
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

void ReceivedBuckets::resume(const io::SplitState& state, io::BlockFile& scratch) {
  keep_for_resume();
  split_->resume(state);
  // Read back once, whole: a bucket the rerun trusts is the bucket the
  // exchange wrote (a failed check ends the job, exit 1, never a wrong output).
  constexpr std::uint64_t kReadBytes = std::uint64_t{1} << 20;
  const io::AlignedBuffer buffer = io::allocate_aligned(kReadBytes);
  for (const io::StoredStream& stream : state.streams) {
    std::uint32_t crc = io::kCrc32cStart;
    for (const auto& [offset, bytes] : stream.extents) {
      for (std::uint64_t done = 0; done < bytes;) {
        const std::size_t n = static_cast<std::size_t>(std::min(kReadBytes, bytes - done));
        scratch.read_now(buffer.get(), offset + done, n);
        crc = io::crc32c(crc, buffer.get(), n);
        done += n;
      }
    }
    if (crc != stream.crc32c) throw Error(io::kCheckpointRegionDamaged);
  }
}

}  // namespace extshuffle::mpi
