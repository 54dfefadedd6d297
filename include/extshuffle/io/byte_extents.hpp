// The bytes of a node's records, wherever they lie: a range of the input
// file, a bucket's region in scratch space followed by its overflow extents,
// or a few bytes in memory (a terminator the input's last line lacked). A
// reader walks them in order with asynchronous reads, and can restart
// anywhere.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "extshuffle/io/block_file.hpp"

namespace extshuffle::io {

struct Extent {
  BlockFile* file = nullptr;  // null: the bytes are at `memory`
  std::uint64_t offset = 0;
  std::uint64_t bytes = 0;
  const std::byte* memory = nullptr;
};

struct ByteExtents {
  std::vector<Extent> extents;
  std::uint64_t bytes = 0;
  // The CRC-32C (io/crc32c.hpp) all `bytes` must have: a checkpointed
  // bucket's (io/bucket_store.hpp). A reader that reads them front to back
  // checks it as the last byte arrives; empty: nothing to check.
  std::optional<std::uint32_t> crc32c;
  void append(const Extent& e);  // merges with the previous extent when contiguous
};

// The bytes of `all` from byte `from` on (a run resumed there).
ByteExtents tail_of(const ByteExtents& all, std::uint64_t from);

// Reads ByteExtents front to back, one request (of pieces of at most 64 MiB)
// in flight at a time. Extents with a crc32c read from their first byte to
// their last without a seek elsewhere are checked as the last read
// finishes: a mismatch throws Error (io/scratch_damage.hpp). Extents under 64 KiB that continue one another in a
// file, with bytes in memory between them (tar samples behind their frame
// prefixes), are read together, up to 4 MiB at once, synchronously: one
// request instead of one per extent.
class ExtentReader {
 public:
  explicit ExtentReader(const ByteExtents& extents);

  // The next read starts at byte `position` of the extents.
  void seek(std::uint64_t position);
  std::uint64_t position() const { return position_; }
  bool at_end() const { return position_ >= extents_->bytes; }

  // Starts reading up to `max` bytes into `to`; finish() waits and returns
  // how many. wait_for(k) returns once the first k bytes of the read are in,
  // so a consumer can start on them while the rest arrives.
  void start(std::byte* to, std::uint64_t max);
  void wait_for(std::uint64_t bytes);
  std::uint64_t finish();
  std::uint64_t read_now(std::byte* to, std::uint64_t max) {
    start(to, max);
    return finish();
  }

 private:
  struct Piece {
    PendingIo io;
    std::uint64_t end;  // bytes of the read complete once this piece is
  };
  const ByteExtents* extents_;
  std::uint64_t position_ = 0;
  std::byte* in_to_ = nullptr;  // where the read in flight lands
  std::uint64_t checked_ = 0;   // bytes from the start that the running CRC covers
  std::uint32_t crc_;
  std::uint64_t in_flight_ = 0;
  std::vector<Piece> pending_;
  std::size_t waited_ = 0;
  std::vector<std::byte> gathered_;  // small extents of one file read at once (tar samples' frames)
};

}  // namespace extshuffle::io
