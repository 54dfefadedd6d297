// The bytes of a node of variable-size records, wherever they lie: a range of
// the input file, or a bucket's region in scratch space followed by its
// overflow extents, or a terminator the input's last line lacked. A reader
// walks them in order with asynchronous reads, and can restart anywhere.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "extshuffle/io/block_file.hpp"

namespace extshuffle::driver {

struct Extent {
  io::BlockFile* file = nullptr;  // null: the bytes are at `memory`
  std::uint64_t offset = 0;
  std::uint64_t bytes = 0;
  const std::byte* memory = nullptr;
};

struct NodeBytes {
  std::vector<Extent> extents;
  std::uint64_t bytes = 0;
  void append(const Extent& e);  // merges with the previous extent when contiguous
};

class NodeReader {
 public:
  explicit NodeReader(const NodeBytes& node) : node_(&node) {}

  // The next read starts at byte `position` of the node.
  void seek(std::uint64_t position);
  std::uint64_t position() const { return position_; }
  bool at_end() const { return position_ >= node_->bytes; }

  // Starts reading up to `max` bytes into `to`; finish() waits and returns
  // how many. One read at a time.
  void start(std::byte* to, std::uint64_t max);
  std::uint64_t finish();
  std::uint64_t read_now(std::byte* to, std::uint64_t max) {
    start(to, max);
    return finish();
  }

 private:
  const NodeBytes* node_;
  std::uint64_t position_ = 0;
  std::uint64_t in_flight_ = 0;
  std::vector<io::PendingIo> pending_;
};

}  // namespace extshuffle::driver
