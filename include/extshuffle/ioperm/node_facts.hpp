// What the walk decides a node's path from (ioperm/node_path.hpp), and the
// paths: public, since a distributed run (distributed_walk.hpp) describes
// its root and its buckets to the walk with them.
#pragma once

#include <cstdint>

namespace extshuffle::ioperm {

// kInRam: the node's records, held once, fit in the budget; kChunksInMemory:
// a split whose chunks are shuffled in memory, slices to the buckets;
// kRouted: a split whose records go one by one to their buckets behind a
// position tag; kLeafInWindows: a leaf larger than memory, placed window by
// window.
enum class NodePath { kInRam, kChunksInMemory, kRouted, kLeafInWindows };

// What the decision needs to know of a node.
struct NodeFacts {
  std::uint64_t records = 0;
  std::uint64_t record_bytes = 0;      // its records' bytes, tags not counted
  bool tagged = false;                 // filled by a routed split: each record after its position tag
  std::uint64_t max_record_bytes = 0;  // no record of the input is longer (text; fixed: the record size)
  std::uint32_t depth = 0;
};

}  // namespace extshuffle::ioperm
