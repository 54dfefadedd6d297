// One output bucket of a streaming node (DESIGN.md 2.3): a byte stream
// appended through two buffers, written behind asynchronously into scratch
// space. Fixed-size records know each bucket's size from the plan and fill
// exactly their region. Variable-size records give each bucket a region of
// its expected size plus some slack; what does not fit goes to overflow
// extents taken from the top of the node's scratch space.
//
// Writers of different buckets may be used by different threads at once (the
// scatter runs by bucket ranges): the only thing they share is the overflow
// top, taken with an atomic add.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstring>
#include <stdexcept>
#include <utility>
#include <vector>

#include "extshuffle/driver/external_executor.hpp"
#include "node_stream.hpp"

namespace extshuffle::driver {

class BucketWriter {
 public:
  // `overflow_top` (may be null when the region cannot overflow) is the
  // first free byte of scratch space, shared by the node's writers. A writer
  // that is not `kept` discards what it is given (a bucket past -n).
  BucketWriter(io::BlockFile& scratch, std::uint64_t region_offset, std::uint64_t region_bytes,
               std::atomic<std::uint64_t>* overflow_top, std::byte* buffers, std::uint64_t buffer_bytes,
               bool kept = true)
      : scratch_(&scratch), region_offset_(region_offset), region_left_(region_bytes), overflow_top_(overflow_top),
        buffers_{buffers, buffers + buffer_bytes}, capacity_(buffer_bytes), kept_(kept) {}

  void append(const std::byte* data, std::uint64_t bytes) {
    while (kept_ && bytes > 0) {
      const std::uint64_t take = std::min(bytes, capacity_ - fill_);
      std::memcpy(buffers_[current_] + fill_, data, take);
      fill_ += take;
      data += take;
      bytes -= take;
      if (fill_ == capacity_) flush();
    }
  }

  // Writes what is buffered; the write completes in the background.
  void flush() {
    if (fill_ == 0) return;
    const std::byte* from = buffers_[current_];
    const std::uint64_t in_region = std::min(fill_, region_left_);
    if (in_region > 0) {
      pending_[current_][0] = scratch_->write(from, region_offset_, in_region);
      stored_.append({scratch_, region_offset_, in_region});
      region_offset_ += in_region;
      region_left_ -= in_region;
    }
    if (in_region < fill_) {
      if (!overflow_top_) throw std::logic_error("a bucket outgrew the region the plan gave it");
      const std::uint64_t rest = fill_ - in_region;
      const std::uint64_t at = overflow_top_->fetch_add((rest + 4095) / 4096 * 4096, std::memory_order_relaxed);
      pending_[current_][1] = scratch_->write(from + in_region, at, rest);
      stored_.append({scratch_, at, rest});
    }
    unreported_bytes_ += fill_;
    fill_ = 0;
    current_ ^= 1;
    // The other buffer must be free before it fills.
    pending_[current_][0].wait();
    pending_[current_][1].wait();
  }

  void finish() {
    flush();
    for (auto& buffer : pending_) {
      for (auto& request : buffer) request.wait();
    }
  }

  // Where the bucket's bytes are, in order (complete after finish()).
  const NodeBytes& stored() const { return stored_; }
  // Bytes handed to scratch writes since the last call; called between
  // scatters, on one thread, to keep the run's statistics and progress current.
  std::uint64_t take_unreported_bytes() { return std::exchange(unreported_bytes_, 0); }

 private:
  io::BlockFile* scratch_;
  std::uint64_t region_offset_;
  std::uint64_t region_left_;
  std::atomic<std::uint64_t>* overflow_top_;
  std::byte* buffers_[2];
  std::uint64_t capacity_;
  std::uint64_t fill_ = 0;
  int current_ = 0;
  io::PendingIo pending_[2][2];  // per buffer: its region part and its overflow part
  NodeBytes stored_;
  std::uint64_t unreported_bytes_ = 0;
  bool kept_;
};

inline void report_bytes_written(std::vector<BucketWriter>& writers, ExternalStats& stats) {
  for (BucketWriter& writer : writers) stats.bytes_written += writer.take_unreported_bytes();
}

}  // namespace extshuffle::driver
