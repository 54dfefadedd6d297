// A routed split whose buckets are leaves larger than memory (records of a
// few hundred bytes and more at a modest budget: a leaf holds up to L = 2^20
// of them) routes each record straight into the window of its leaf's output
// that will hold it (docs/design.md, "Large records"). Every leaf's shuffle
// is known before the split starts, so with the leaves' inverse
// permutations held (4 bytes a record of the node) the router knows each
// record's output position in its leaf as soon as it knows its position in
// the bucket: it appends the record to the window of consecutive output
// positions that holds it, behind a tag of its place in the window. The
// leaves are then placed window by window from what the split wrote: no
// pass of their own. Without this, each such leaf would be read, routed
// into windows through scratch and read again (leaf_windows.hpp): a third
// write and read of the data.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "extshuffle/io/bucket_store.hpp"
#include "extshuffle/ioperm/walk_checkpoint.hpp"
#include "position_tag.hpp"
#include "record_layout.hpp"
#include "routed_memory.hpp"

namespace extshuffle::ioperm {

// The windows of a routed split of `node` at this budget: empty unless its
// buckets are leaves that do not fit in memory and the router and a write
// buffer per window fit, with the leaves' orders in memory if they fit too,
// otherwise in scratch space. The same answer for the walk and the schedule.
BucketWindows plan_bucket_windows(const RecordLayout& layout, const NodeFacts& node, std::uint64_t budget);

// Step 4 of such a split: each leaf placed window by window, in order, from
// the split's destinations. Returns the passes through disk below the split
// (1, or 2 where a window turned out larger than memory and was cut again).
// From destination `first` on; after each window, `points` (when given:
// walk_checkpoint.hpp) is called and gives its space back.
std::uint32_t run_bucket_windows(const RecordLayout& layout, const core::Node& node, const BucketWindows& windows,
                                 std::uint64_t longest_record_bytes, io::BucketStore::Split& split,
                                 io::BucketStore& store, RunContext& ctx, std::uint64_t first = 0,
                                 const EmitPoint* points = nullptr);

}  // namespace extshuffle::ioperm
