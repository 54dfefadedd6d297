#include "extshuffle/io/byte_extents.hpp"

#include <algorithm>
#include <cstring>

#include "extshuffle/io/crc32c.hpp"
#include "extshuffle/io/scratch_damage.hpp"

namespace extshuffle::io {

ByteExtents tail_of(const ByteExtents& all, std::uint64_t from) {
  ByteExtents tail;
  std::uint64_t first = 0;
  for (const Extent& e : all.extents) {
    const std::uint64_t end = first + e.bytes;
    if (end > from) {
      const std::uint64_t skip = from > first ? from - first : 0;
      tail.append({e.file, e.file ? e.offset + skip : 0, e.bytes - skip, e.file ? nullptr : e.memory + skip});
    }
    first = end;
  }
  return tail;
}

ExtentReader::ExtentReader(const ByteExtents& extents) : extents_(&extents), crc_(kCrc32cStart) {}

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
  in_to_ = to;
  // Requests of at most 64 MiB, so that no single request is huge and the
  // first pieces can be used while the last are read.
  constexpr std::uint64_t kPiece = std::uint64_t{64} << 20;
  constexpr std::uint64_t kSmall = std::uint64_t{64} << 10, kGather = std::uint64_t{4} << 20;
  const std::vector<Extent>& list = extents_->extents;
  std::uint64_t extent_first = 0;
  std::uint64_t placed = 0;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const Extent& e = list[i];
    if (placed == max) break;
    const std::uint64_t extent_end = extent_first + e.bytes;
    if (position_ + placed < extent_end) {
      const std::uint64_t within = position_ + placed - extent_first;
      const std::uint64_t take = std::min(e.bytes - within, max - placed);
      if (e.file && take < kSmall && i + 1 < list.size() && !list[i + 1].file) {
        // Gather: the file's bytes of this and the following extents that
        // continue it in the file, in one read, then each in its place.
        const std::uint64_t span_begin = e.offset + within;
        std::uint64_t span_end = span_begin, group = 0;
        std::size_t k = i;
        for (; k < list.size() && placed + group < max; ++k) {
          const Extent& x = list[k];
          const std::uint64_t skip = k == i ? within : 0;
          const std::uint64_t t = std::min(x.bytes - skip, max - placed - group);
          if (x.file && (x.file != e.file || x.offset + skip != span_end || span_end + t - span_begin > kGather)) break;
          if (x.file) span_end += t;
          group += t;
          extent_first += k == i ? 0 : list[k - 1].bytes;
          if (t < x.bytes - skip) {
            ++k;
            break;
          }
        }
        gathered_.resize(span_end - span_begin);
        e.file->read_now(gathered_.data(), span_begin, gathered_.size());
        std::uint64_t from = 0;
        for (std::size_t j = i; j < k; ++j) {
          const Extent& x = list[j];
          const std::uint64_t skip = j == i ? within : 0;
          const std::uint64_t t = std::min(x.bytes - skip, max - placed);
          std::memcpy(to + placed, x.file ? gathered_.data() + from : x.memory + skip, t);
          if (x.file) from += t;
          placed += t;
        }
        // Go on at extent k (extent_first: where extent k - 1 starts).
        extent_first += list[k - 1].bytes;
        i = k - 1;
        continue;
      }
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
  // The checksum of extents read front to back, as their bytes arrive.
  if (extents_->crc32c && got > 0 && checked_ == position_) {
    crc_ = crc32c(crc_, in_to_, got);
    checked_ += got;
    if (checked_ == extents_->bytes && crc_ != *extents_->crc32c) throw Error(kCheckpointRegionDamaged);
  }
  position_ += got;
  in_flight_ = 0;
  return got;
}

}  // namespace extshuffle::io
