#include "extshuffle/io/bucket_store.hpp"

#include <algorithm>
#include <functional>
#include <utility>

#include "extshuffle/io/crc32c.hpp"
#include "extshuffle/io/scratch_damage.hpp"

namespace extshuffle::io {

namespace {

// Where bytes past a bucket's region go: `bytes` at the split's overflow
// top, which moves up by them rounded up to kScratchAlign (so that every
// extent stays aligned). A region that cannot overflow is exactly the
// bytes of the records the plan sends to it (fixed-size records): more can
// only come from position tags damaged in scratch space.
std::function<std::uint64_t(std::uint64_t)> overflow_at(std::atomic<std::uint64_t>* overflow_top) {
  if (!overflow_top) return [](std::uint64_t) -> std::uint64_t { throw_scratch_damaged(); };
  return [overflow_top](std::uint64_t bytes) {
    return overflow_top->fetch_add((bytes + kScratchAlign - 1) / kScratchAlign * kScratchAlign,
                                   std::memory_order_relaxed);
  };
}

}  // namespace

BucketWriter::BucketWriter(BlockFile& scratch, std::uint64_t region_offset, std::uint64_t region_bytes,
                           std::atomic<std::uint64_t>* overflow_top, std::byte* buffers, std::uint64_t buffer_bytes,
                           bool kept)
    : writer_({.file = &scratch, .offset = region_offset, .range = region_bytes, .overflow = overflow_at(overflow_top)},
              buffers, buffer_bytes),
      kept_(kept) {}

void BucketWriter::append(const std::byte* data, std::uint64_t bytes) {
  if (!kept_) return;
  writer_.write(data, bytes);
}

StoredStream BucketWriter::state() const {
  StoredStream stream{writer_.bytes(), writer_.checksum(), {}};
  for (const Extent& e : writer_.stored().extents) stream.extents.emplace_back(e.offset, e.bytes);
  return stream;
}

void BucketWriter::resume(const StoredStream& stream, BlockFile& scratch) {
  ByteExtents stored;
  for (const auto& [offset, bytes] : stream.extents) stored.append({&scratch, offset, bytes});
  if (stored.bytes != stream.bytes) throw_scratch_damaged();
  writer_.resume(stored, stream.bytes);
  reported_bytes_ = stream.bytes;
  writer_.keep_checksum(stream.crc32c);
  inherited_ = stream.bytes > 0;
}

std::uint64_t BucketWriter::take_unreported_bytes() {
  return writer_.issued_bytes() - std::exchange(reported_bytes_, writer_.issued_bytes());
}

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
  if (!checksummed_) store_.scratch_.discard(base_, overflow_top_.load() - base_);
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

void BucketStore::Split::keep_checksums() {
  checksummed_ = true;
  for (auto& writer : writers_) writer.keep_checksum();
}

ByteExtents BucketStore::Split::checked_bucket(std::uint64_t j) const {
  ByteExtents extents = writers_[j].stored();
  if (checksummed_ && writers_[j].inherited()) extents.crc32c = writers_[j].checksum();
  return extents;
}

SplitState BucketStore::Split::checkpoint() {
  for (auto& writer : writers_) writer.finish();
  SplitState state{base_, overflow_top_.load(), {}};
  state.streams.reserve(writers_.size());
  for (const auto& writer : writers_) state.streams.push_back(writer.state());
  return state;
}

void BucketStore::Split::resume(const SplitState& state) {
  if (state.base != base_ || state.streams.size() != writers_.size() || state.overflow_top < overflow_top_.load()) {
    throw Error("checkpoint: the buckets it keeps are not laid out as this run lays them out: not trusted");
  }
  overflow_top_ = state.overflow_top;
  for (std::size_t j = 0; j < writers_.size(); ++j) writers_[j].resume(state.streams[j], store_.scratch_);
  store_.top_ = std::max(store_.top_, state.overflow_top);
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
