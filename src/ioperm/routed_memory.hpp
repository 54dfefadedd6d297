// The memory of a routed split and of the windows it may route into (see
// node_path.hpp for when a split is routed, bucket_windows.hpp and
// leaf_windows.hpp for the windows): the arithmetic that the decision, the
// routed scatter and both kinds of windows share, kept below all of them so
// that none includes another's header back.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "extshuffle/ioperm/node_facts.hpp"
#include "position_tag.hpp"
#include "record_layout.hpp"

namespace extshuffle::ioperm {

// Chunks a routed split of a node at `depth` may hold open at once: one for
// records in plan order, and one more per routed split above (chunk_router.hpp).
inline std::uint32_t routed_open_chunks(const NodeFacts& node) { return node.tagged ? node.depth + 1 : 1; }

// The windows of a routed split's buckets (plan_bucket_windows, bucket_windows.hpp).
struct BucketWindows {
  std::uint64_t p = 0;                    // buckets (0: the split routes to whole buckets)
  std::vector<std::uint64_t> per_window;  // per bucket: output positions a window holds
  std::vector<std::uint64_t> first;       // per bucket its first destination; first[p]: all of them
  PositionTag tag;                        // a record's place in its window
  bool orders_on_disk = false;            // the leaves' orders in scratch space (leaf_orders.hpp)
  std::uint64_t orders_bytes = 0;         // in memory: the leaves' orders; on disk: 0

  bool empty() const { return p == 0; }
  std::uint64_t destinations() const { return first.back(); }
  // The output positions of window w of bucket j, a bucket of `records`.
  std::uint64_t window_records(std::uint64_t j, std::uint64_t w, std::uint64_t records) const {
    return std::min(per_window[j], records - w * per_window[j]);
  }
};

// The arena of a routed split: the router (with the leaves' orders when it
// routes into their windows: bucket_windows.hpp), the record stream's space
// and arrays, the batch's destinations, then two buffers per destination.
struct RoutedSplitMemory {
  std::uint64_t router_bytes = 0;  // the router and the leaves' orders
  std::uint64_t space_bytes = 0;
  std::uint64_t max_batch = 0;
  std::uint64_t chunk_memory_bytes = 0;  // all of the above and the batch arrays
  std::uint64_t bucket_buffer_bytes = 0;
};
RoutedSplitMemory routed_split_memory(const RecordLayout& layout, std::uint64_t p, std::uint32_t open_chunks,
                                      std::uint64_t longest_record_bytes, std::uint64_t budget,
                                      const BucketWindows* windows = nullptr);

// The smallest budget from which routed_split_memory(layout, p, open_chunks,
// longest_record_bytes, budget) routes to whole buckets with buffers of at
// least kMinBucketBufferBytes: its stream takes half of what the router
// leaves, and its batch arrays grow with the rest, so the sum of the parts
// at their smallest is not enough. Costs a few hundred calls at most.
std::uint64_t minimum_routed_split_bytes(const RecordLayout& layout, std::uint64_t p, std::uint32_t open_chunks,
                                         std::uint64_t longest_record_bytes);

// The smallest space a record stream may read into: it must hold the
// longest record (0: unknown) and its tag.
std::uint64_t minimum_stream_space(const RecordLayout& layout, std::uint64_t longest_record_bytes);

// Batch arrays of a routed split or a leaf in windows: per record its
// destination (bucket, position) and its place in the bucket order.
inline std::uint64_t route_arrays_bytes(std::uint64_t max_batch, std::uint64_t p) {
  return 20 * max_batch + 8 * (p + 1) + 256;
}

}  // namespace extshuffle::ioperm
