#include "extshuffle/io/write_behind.hpp"

#include <fcntl.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <utility>

#include "extshuffle/io/crc32c.hpp"

namespace extshuffle::io {

WriteBehind::WriteBehind(Target target, std::byte* buffers, std::size_t buffer_bytes)
    : target_(std::move(target)), next_(target_.offset), range_left_(target_.range),
      buffer_{buffers, buffers + buffer_bytes}, capacity_(buffer_bytes), written_back_(target_.offset) {
  if (buffer_bytes == 0) throw std::invalid_argument("write-behind buffers of 0 bytes");
}

void WriteBehind::write(const std::byte* data, std::uint64_t bytes) {
  while (bytes > 0) {
    const std::size_t take = static_cast<std::size_t>(std::min<std::uint64_t>(bytes, capacity_ - fill_));
    std::memcpy(buffer_[current_] + fill_, data, take);
    fill_ += take;
    data += take;
    bytes -= take;
    if (fill_ == capacity_) flush();
  }
}

// Issues the current buffer and switches to the other one, once its own
// earlier write has completed: everything issued before this buffer is then
// in the page cache, and its writeback can start.
void WriteBehind::flush() {
  if (fill_ == 0) return;
  const std::uint64_t settled_end = next_;
  if (checksummed_) crc_ = crc32c(crc_, buffer_[current_], fill_);
  issue(buffer_[current_], fill_);
  fill_ = 0;
  current_ ^= 1;
  pending_[current_][0].wait();
  pending_[current_][1].wait();
  start_writeback(settled_end);
}

// Writes `bytes` from `from`: into what is left of the range, the rest at
// the place `overflow` gives.
void WriteBehind::issue(const std::byte* from, std::uint64_t bytes) {
  const std::uint64_t in_range = std::min(bytes, range_left_);
  if (in_range > 0) {
    pending_[current_][0] = target_.file->write(from, next_, in_range);
    stored_.append({target_.file, next_, in_range});
    next_ += in_range;
    range_left_ -= in_range;
  }
  if (in_range < bytes) {
    if (!target_.overflow) throw std::logic_error("a write-behind stream outgrew the range it was given");
    const std::uint64_t rest = bytes - in_range;
    const std::uint64_t at = target_.overflow(rest);
    pending_[current_][1] = target_.file->write(from + in_range, at, rest);
    stored_.append({target_.file, at, rest});
  }
  issued_ += bytes;
}

void WriteBehind::keep_checksum(std::uint32_t crc) {
  if (fill_ != 0) throw std::logic_error("a write-behind stream's checksum kept with bytes buffered");
  checksummed_ = true;
  crc_ = crc;
}

void WriteBehind::resume(const ByteExtents& stored, std::uint64_t bytes) {
  if (issued_ != 0 || fill_ != 0 || stored.bytes != bytes) {
    throw std::logic_error("a write-behind stream resumed after its first write");
  }
  const std::uint64_t in_range = std::min(bytes, target_.range);
  stored_ = stored;
  issued_ = bytes;
  next_ = target_.offset + in_range;
  range_left_ = target_.range - in_range;
  written_back_ = next_;
}

void WriteBehind::finish() {
  flush();
  for (auto& buffer : pending_) {
    for (auto& request : buffer) request.wait();
  }
  start_writeback(next_);
}

// The range's bytes before `settled_end` are in the page cache: start sending
// them to the disk now, rather than when the kernel's dirty thresholds say so
// or all at once in the final fsync. Asynchronous and best effort: the fsync
// still guarantees them.
void WriteBehind::start_writeback(std::uint64_t settled_end) {
  if (target_.writeback_fd < 0 || settled_end <= written_back_) return;
  (void)::sync_file_range(target_.writeback_fd, static_cast<off_t>(written_back_),
                          static_cast<off_t>(settled_end - written_back_), SYNC_FILE_RANGE_WRITE);
  written_back_ = settled_end;
}

}  // namespace extshuffle::io
