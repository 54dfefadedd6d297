#include "extshuffle/io/bucket_store.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <utility>

namespace extshuffle::io {

BucketWriter::BucketWriter(BlockFile& scratch, std::uint64_t region_offset, std::uint64_t region_bytes,
                           std::atomic<std::uint64_t>* overflow_top, std::byte* buffers, std::uint64_t buffer_bytes,
                           bool kept)
    : scratch_(&scratch), region_offset_(region_offset), region_left_(region_bytes), overflow_top_(overflow_top),
      buffers_{buffers, buffers + buffer_bytes}, capacity_(buffer_bytes), kept_(kept) {}

void BucketWriter::append(const std::byte* data, std::uint64_t bytes) {
  while (kept_ && bytes > 0) {
    const std::uint64_t take = std::min(bytes, capacity_ - fill_);
    std::memcpy(buffers_[current_] + fill_, data, take);
    fill_ += take;
    data += take;
    bytes -= take;
    if (fill_ == capacity_) flush();
  }
}

void BucketWriter::flush() {
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
    const std::uint64_t at =
        overflow_top_->fetch_add((rest + kScratchAlign - 1) / kScratchAlign * kScratchAlign, std::memory_order_relaxed);
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

void BucketWriter::finish() {
  flush();
  for (auto& buffer : pending_) {
    for (auto& request : buffer) request.wait();
  }
}

std::uint64_t BucketWriter::take_unreported_bytes() { return std::exchange(unreported_bytes_, 0); }

BucketStore::Split::Split(BucketStore& store, std::span<const std::uint64_t> region_bytes, std::span<const bool> kept,
                          bool may_overflow, std::byte* buffers, std::uint64_t buffer_bytes)
    : store_(store), base_(store.top_) {
  std::uint64_t top = base_;
  std::vector<std::uint64_t> region_offsets(region_bytes.size());
  for (std::size_t j = 0; j < region_bytes.size(); ++j) {
    region_offsets[j] = top;
    top += may_overflow ? (region_bytes[j] + kScratchAlign - 1) / kScratchAlign * kScratchAlign : region_bytes[j];
  }
  if (!may_overflow) top = (top + kScratchAlign - 1) / kScratchAlign * kScratchAlign;
  overflow_top_ = top;
  writers_.reserve(region_bytes.size());
  for (std::size_t j = 0; j < region_bytes.size(); ++j) {
    writers_.emplace_back(store.scratch_, region_offsets[j], region_bytes[j], may_overflow ? &overflow_top_ : nullptr,
                          buffers + 2 * j * buffer_bytes, buffer_bytes, kept[j]);
  }
  store.top_ = top;
}

BucketStore::Split::~Split() {
  for (auto& writer : writers_) {
    try {
      writer.finish();  // no write may still target the space given back
    } catch (...) {
      // The run is failing already; its error is the one reported.
    }
  }
  store_.scratch_.discard(base_, overflow_top_.load() - base_);
  store_.top_ = base_;
}

std::uint64_t BucketStore::Split::take_written_bytes() {
  std::uint64_t bytes = 0;
  for (auto& writer : writers_) bytes += writer.take_unreported_bytes();
  return bytes;
}

std::uint64_t BucketStore::Split::finish() {
  for (auto& writer : writers_) writer.finish();
  store_.top_ = overflow_top_.load();
  return take_written_bytes();
}

ByteExtents BucketStore::Split::buckets(std::uint64_t first, std::uint64_t end) const {
  ByteExtents all;
  for (std::uint64_t j = first; j < end; ++j) {
    for (const Extent& e : writers_[j].stored().extents) all.append(e);
  }
  return all;
}

void BucketStore::Split::discard(std::uint64_t j) {
  for (const Extent& e : writers_[j].stored().extents) {
    if (e.file) e.file->discard(e.offset, e.bytes);
  }
}

}  // namespace extshuffle::io
