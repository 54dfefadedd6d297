#include "node_stream.hpp"

#include <algorithm>
#include <cstring>

namespace extshuffle::driver {

void NodeBytes::append(const Extent& e) {
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

void NodeReader::seek(std::uint64_t position) {
  finish();
  position_ = std::min(position, node_->bytes);
}

void NodeReader::start(std::byte* to, std::uint64_t max) {
  finish();
  // Requests of at most 64 MiB, so that no single request is huge.
  constexpr std::uint64_t kPiece = std::uint64_t{64} << 20;
  std::uint64_t extent_first = 0;
  std::uint64_t placed = 0;
  for (const Extent& e : node_->extents) {
    if (placed == max) break;
    const std::uint64_t extent_end = extent_first + e.bytes;
    if (position_ + placed < extent_end) {
      const std::uint64_t within = position_ + placed - extent_first;
      const std::uint64_t take = std::min(e.bytes - within, max - placed);
      if (!e.file) {
        std::memcpy(to + placed, e.memory + within, take);
      } else {
        for (std::uint64_t done = 0; done < take; done += kPiece) {
          pending_.push_back(e.file->read(to + placed + done, e.offset + within + done, std::min(kPiece, take - done)));
        }
      }
      placed += take;
    }
    extent_first = extent_end;
  }
  in_flight_ = placed;
}

std::uint64_t NodeReader::finish() {
  for (auto& p : pending_) p.wait();
  pending_.clear();
  const std::uint64_t got = in_flight_;
  position_ += got;
  in_flight_ = 0;
  return got;
}

}  // namespace extshuffle::driver
