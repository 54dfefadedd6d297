// The one write-behind writer of the io layer: a sequential stream of bytes
// written into a BlockFile through two buffers taking turns, one filling
// while the other's write completes in the background, so that IO overlaps
// whatever produces the bytes. The output file (output_file.hpp), the bucket
// store's writers (bucket_store.hpp) and a rank's range of the distributed
// output (src/mpi/outputs/shared_output.hpp) all write through it.
//
// The stream starts at `offset` and fills [offset, offset + range) in order.
// Bytes past the range (a bucket outgrowing its region) go where `overflow`
// places them, one extent per buffer; stored() lists where every byte went.
// Given a descriptor of the file, the writer starts the kernel's writeback
// (sync_file_range) of every range of the file whose write has completed, as
// the next buffer is issued and for the tail in finish(), so that the fsync
// at the end finds little left to flush instead of the whole file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>

#include "extshuffle/io/block_file.hpp"
#include "extshuffle/io/byte_extents.hpp"

namespace extshuffle::io {

class WriteBehind {
 public:
  struct Target {
    BlockFile* file = nullptr;
    std::uint64_t offset = 0;  // of the stream's first byte
    std::uint64_t range = std::numeric_limits<std::uint64_t>::max();  // bytes from offset on
    // Space for `bytes` past the range: returns its offset. Empty: the
    // stream must fit in its range (a write past it throws std::logic_error).
    std::function<std::uint64_t(std::uint64_t bytes)> overflow = {};
    // A POSIX descriptor of the file, for writeback; -1: none (scratch).
    int writeback_fd = -1;
  };

  // `buffers`: two buffers of `buffer_bytes` one after the other, owned by
  // the caller and left alone once finish() returns (or the writer is gone).
  // Page-aligned buffers and sizes a multiple of a page copy fastest, but
  // any will do.
  WriteBehind(Target target, std::byte* buffers, std::size_t buffer_bytes);
  WriteBehind(WriteBehind&&) noexcept = default;
  WriteBehind& operator=(WriteBehind&&) = delete;
  // Waits for writes in flight, swallowing their errors (the run is
  // failing already, or finish() has seen them).
  ~WriteBehind() = default;

  // Appends bytes. A full buffer is issued and the other one waited for:
  // throws IoError (ENOSPC included), possibly for an earlier buffer's write.
  void write(const std::byte* data, std::uint64_t bytes);
  // Issues what is buffered; the write completes in the background.
  void flush();
  // Flushes, waits for every write and starts the writeback of the tail.
  // Throws IoError.
  void finish();

  // Before the first write: the stream's first `bytes` bytes are already in
  // the file where `stored` says (a run resumed from its checkpoint); the
  // next byte follows them, in the range or past it as issue() would have
  // placed it.
  void resume(const ByteExtents& stored, std::uint64_t bytes);

  // From now on, the CRC-32C of the stream's bytes is kept, continuing
  // `crc` (the CRC of the bytes before: kCrc32cStart, or a resumed
  // stream's). It is taken over each buffer as it is issued, one call over
  // the whole buffer while it is still in cache, rather than per write():
  // a heavy-tailed text's writes of a record or a position tag each are
  // mostly too short for the CRC's fast path.
  void keep_checksum(std::uint32_t crc);
  // The CRC-32C of the bytes issued so far: of every byte appended once
  // flush() or finish() has returned.
  std::uint32_t checksum() const { return crc_; }

  // Bytes appended so far, buffered ones included.
  std::uint64_t bytes() const { return issued_ + fill_; }
  // Bytes handed to the file's writes so far.
  std::uint64_t issued_bytes() const { return issued_; }
  // Where the stream's bytes are, in order (complete after finish()).
  const ByteExtents& stored() const { return stored_; }

 private:
  void issue(const std::byte* from, std::uint64_t bytes);
  void start_writeback(std::uint64_t settled_end);

  Target target_;
  std::uint64_t next_;        // where the range's next byte goes
  std::uint64_t range_left_;  // bytes of the range not yet issued
  std::byte* buffer_[2];
  std::size_t capacity_;
  std::size_t fill_ = 0;
  int current_ = 0;
  std::uint64_t issued_ = 0;
  bool checksummed_ = false;
  std::uint32_t crc_ = 0;
  std::uint64_t written_back_;  // writeback started for the range before this offset
  PendingIo pending_[2][2];     // per buffer: its part in the range, its overflow part
  ByteExtents stored_;
};

}  // namespace extshuffle::io
