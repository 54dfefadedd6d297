// A leaf larger than memory (docs/design.md, "Large records"): one pass
// over the leaf routes each record, by the output position its bijective
// shuffle gives it (device::shuffle_inverse), to the window of consecutive
// output positions that holds it, through scratch space, behind a tag of
// its place in the window; each window is then read back, its records put
// in place by their tags, and handed on in order. One extra write and read
// of the leaf, whatever its size against the budget; a window that turns
// out larger than memory (a few enormous text records) is cut the same way
// again, so it costs one more pass of its own bytes only.
#pragma once

#include <cstdint>

#include "extshuffle/io/bucket_store.hpp"
#include "position_tag.hpp"
#include "record_layout.hpp"
#include "routed_memory.hpp"

namespace extshuffle::ioperm {

// Output positions a window holds, for a leaf of `records` records and
// `record_bytes` bytes at this budget: as many as fit in memory, for text
// half of that on average, so that windows larger than memory are rare.
std::uint64_t leaf_window_records(const RecordLayout& layout, std::uint64_t records, std::uint64_t record_bytes,
                                  std::uint64_t budget);

// Whether a leaf of `records` records and `record_bytes` bytes goes through
// windows in one pass at this budget: as many windows as it wants have
// write buffers of at least kMinBucketBufferBytes (otherwise windows are
// larger and cut again, a pass more of their bytes).
bool leaf_in_one_pass(const RecordLayout& layout, std::uint64_t records, std::uint64_t record_bytes,
                      std::uint64_t budget);

// Runs `leaf` (records in `data` as `facts` says) with the arena of `ctx`
// and scratch space from `store`; its output goes to ctx.output in order,
// cut at -n. Returns the passes through disk it took (2: read and routed,
// read back; more where a window was cut again). Throws InputError for a
// record larger than what the budget leaves for reading one, or an input
// that no longer holds its records.
std::uint32_t run_leaf_in_windows(const RecordLayout& layout, const core::Node& leaf, const io::ByteExtents& data,
                                  const NodeFacts& facts, bool root, io::BucketStore& store, RunContext& ctx);

// One window of `count` output positions from `first_output` (each record
// behind a `tag` of its place in the window) placed in the arena and handed
// to ctx.output; one larger than memory after all is cut again through
// `store`. Returns the passes through disk it took (1, or more when cut).
std::uint32_t emit_window(const RecordLayout& layout, const io::ByteExtents& window, std::uint64_t count,
                          const PositionTag& tag, std::uint64_t first_output, std::uint64_t longest_record_bytes,
                          io::BucketStore& store, RunContext& ctx);

}  // namespace extshuffle::ioperm
