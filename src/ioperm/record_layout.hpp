// What the walk needs to know about how records lie in bytes: the one
// interface between the IOPerm plan walk (plan_walk.hpp), which is written
// once, and the two record layouts, fixed-size records (fixed_records.hpp)
// and text records (text_records.hpp). The paths that take records one by
// one (a routed split, a leaf in windows) need only the layout's framing and
// are written once in the walk.
//
// A virtual class rather than a template policy: every call is per node, per
// group of chunks or per (bucket, chunk) slice, never per record, so the
// indirection costs nothing measurable, and the walk is compiled once and
// reads as one plain class. The per-record loops live inside the layouts.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>

#include "extshuffle/core/plan.hpp"
#include "extshuffle/core/variable_philox.hpp"
#include "extshuffle/io/bucket_store.hpp"
#include "extshuffle/io/byte_extents.hpp"
#include "extshuffle/io/byte_sink.hpp"
#include "extshuffle/ioperm/node_facts.hpp"
#include "record_stream.hpp"
#include "run_context.hpp"

namespace extshuffle::ioperm {


// How a split with its chunks in memory carves the budget: chunk memory
// first (read-ahead, shuffle workspace), then two write buffers per bucket.
struct SplitLayout {
  std::uint64_t chunk_memory_bytes = 0;
  std::uint64_t bucket_buffer_bytes = 0;
};

// Steps 1 and 2 of a split with its chunks in memory, for one layout: groups
// of whole chunks read ahead and located in the chunk memory, then shuffled;
// step 3 asks for slices.
class ChunkGroups {
 public:
  virtual ~ChunkGroups() = default;
  // Waits for the bytes of the next group, from chunk i on, locates up to
  // kMaxChunkGroup whole chunks in them and starts reading ahead. Returns
  // how many (at least one: the path was chosen because chunks fit).
  virtual std::uint64_t next(std::uint64_t i) = 0;
  // 2. Shuffles the located chunks i .. i + count - 1 in one batch.
  virtual void shuffle(std::uint64_t i, std::uint64_t count) = 0;
  // 3. Appends positions [k0, k1) of shuffled chunk g of the group to
  //    `bucket`. Called from several threads, one per bucket range.
  virtual void append_slice(std::uint64_t g, std::uint64_t k0, std::uint64_t k1, io::ByteSink& bucket) const = 0;
  // After the last chunk: nothing but what the layout may skip follows.
  virtual void finish() = 0;
  // After next(): bytes of the data before the first record after the
  // group (where a scatter resumed after it starts).
  virtual std::uint64_t consumed_bytes() const = 0;
};

class RecordLayout {
 public:
  virtual ~RecordLayout() = default;

  virtual const WalkOptions& options() const = 0;
  // Records found by their framing (lines, TFRecord frames, tar samples),
  // not of a fixed size.
  virtual bool framed() const = 0;
  // How records are found; `root`: the input itself (lines may skip blank
  // records there).
  virtual RecordFraming framing(bool root) const = 0;
  // Throws BudgetError (naming the minimum) unless the plan of `root` can
  // run within `budget` bytes: in RAM, or every node on whatever path the
  // budget gives it (node_path.hpp, minimum_memory_bytes).
  void check_budget(const NodeFacts& root, std::uint64_t budget) const;

  // Bytes a node needs to run in RAM, its records held once (the least of
  // the ways the layout has), and the bytes of the way it takes when
  // `budget` bytes are there (the fastest that fits).
  virtual std::uint64_t in_memory_bytes(const NodeFacts& node) const = 0;
  virtual std::uint64_t in_memory_bytes(const NodeFacts& node, std::uint64_t budget) const {
    (void)budget;
    return in_memory_bytes(node);
  }
  // The arena of a root that runs in RAM in `in_memory` bytes (what
  // in_memory_bytes(node, budget) gave) when its records are mapped
  // already (ctx.root_mapped): what its way needs beside them, which stay
  // where they lie; UINT64_MAX where the way needs its own copy.
  virtual std::uint64_t mapped_arena_bytes(const NodeFacts& node, std::uint64_t in_memory) const {
    return in_memory - (node.record_bytes + 63) / 64 * 64;
  }
  // 2.3, a node that fits: its output goes to ctx.output in order.
  virtual void run_in_memory(const core::Node& node, const io::ByteExtents& data, const NodeFacts& facts, bool root,
                             RunContext& ctx) const = 0;

  // Whether a split of this node can shuffle its chunks in memory (records
  // in plan order only), and how it then carves the budget.
  virtual bool chunks_fit(const NodeFacts& node, std::uint64_t budget) const = 0;
  virtual SplitLayout split_layout(std::uint64_t p, std::uint64_t budget) const = 0;
  // Chunks [first_chunk, end_chunk) of `node`, whose bytes `data` holds
  // (starting with chunk first_chunk).
  virtual std::unique_ptr<ChunkGroups> open_chunk_groups(const core::Node& node, const io::ByteExtents& data,
                                                         bool root, std::uint64_t first_chunk, std::uint64_t end_chunk,
                                                         std::uint64_t chunk_memory_bytes, RunContext& ctx) const = 0;

  // Scratch bytes bucket j of a node (record_bytes of records, tags not
  // counted) gets, each of its records behind a tag of `tag_width` bytes;
  // exact (no overflow) for fixed-size records.
  virtual std::uint64_t bucket_region_bytes(std::uint64_t record_bytes, std::uint64_t n,
                                            std::uint64_t bucket_records, std::uint32_t tag_width) const = 0;
  virtual bool buckets_may_overflow() const = 0;

  // Step 4 for small buckets: consecutive buckets that each run in a group
  // (with `workspace_bytes` of workspace; `stored_bytes` read back) are
  // read with one request and run together from memory by
  // run_buckets_in_memory: buckets [first, end) of `node`, their bytes one
  // after the other at `input` (bucket_bytes[j - first] each), `workspace`
  // for the rest; their output goes to ctx.output in bucket order.
  virtual bool runs_in_group(const NodeFacts& bucket, std::uint64_t stored_bytes,
                             std::uint64_t workspace_bytes) const = 0;
  virtual void run_buckets_in_memory(const core::Node& node, std::uint64_t p, std::uint64_t first, std::uint64_t end,
                                     std::span<const std::uint64_t> bucket_bytes, bool tagged, std::byte* input,
                                     std::byte* workspace, RunContext& ctx) const = 0;
};

}  // namespace extshuffle::ioperm
