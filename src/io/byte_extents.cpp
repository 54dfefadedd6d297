#include "extshuffle/io/byte_extents.hpp"

#include <algorithm>
#include <cstring>

namespace extshuffle::io {

void ByteExtents::append(const Extent& e) {
  if (e.bytes == 0) return;
  bytes += e.bytes;
  if (!extents.empty()) {
    Extent& last = extents.back();
    if (last.file && last.file == e.file && last.offset + last.bytes == e.offset) {
      last.bytes += e.bytes;
      return;
    }
  }
  extents.push_back(e);
}

void ExtentReader::seek(std::uint64_t position) {
  finish();
  position_ = std::min(position, extents_->bytes);
}

void ExtentReader::start(std::byte* to, std::uint64_t max) {
  finish();
  // Requests of at most 64 MiB, so that no single request is huge and the
  // first pieces can be used while the last are read.
  constexpr std::uint64_t kPiece = std::uint64_t{64} << 20;
  std::uint64_t extent_first = 0;
  std::uint64_t placed = 0;
  for (const Extent& e : extents_->extents) {
    if (placed == max) break;
    const std::uint64_t extent_end = extent_first + e.bytes;
    if (position_ + placed < extent_end) {
      const std::uint64_t within = position_ + placed - extent_first;
      const std::uint64_t take = std::min(e.bytes - within, max - placed);
      if (!e.file) {
        std::memcpy(to + placed, e.memory + within, take);
      } else {
        for (std::uint64_t done = 0; done < take; done += kPiece) {
          const std::uint64_t piece = std::min(kPiece, take - done);
          pending_.push_back({e.file->read(to + placed + done, e.offset + within + done, piece), placed + done + piece});
        }
      }
      placed += take;
    }
    extent_first = extent_end;
  }
  in_flight_ = placed;
}

void ExtentReader::wait_for(std::uint64_t bytes) {
  for (; waited_ < pending_.size(); ++waited_) {
    // Pieces end in increasing order; bytes held in memory are in at once.
    if (waited_ > 0 && pending_[waited_ - 1].end >= bytes) return;
    pending_[waited_].io.wait();
  }
}

std::uint64_t ExtentReader::finish() {
  for (auto& p : pending_) p.io.wait();
  pending_.clear();
  waited_ = 0;
  const std::uint64_t got = in_flight_;
  position_ += got;
  in_flight_ = 0;
  return got;
}

}  // namespace extshuffle::io
