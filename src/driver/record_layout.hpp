// What the driver needs to know about how records lie in bytes: the one
// interface between the IOPerm plan walk (plan_walk.hpp), which is written
// once, and the two record layouts, fixed-size records (fixed_records.hpp)
// and text records (text_records.hpp).
//
// A virtual class rather than a template policy: every call is per node, per
// group of chunks or per (bucket, chunk) slice, never per record, so the
// indirection costs nothing measurable, and the driver is compiled once and
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
#include "run_context.hpp"

namespace extshuffle::driver {

// Positions [first, end) of a shuffled chunk or leaf, their bytes contiguous
// at `bytes`: position k starts at offset(k) and ends at offset(k + 1).
struct Window {
  const std::byte* bytes = nullptr;
  std::uint64_t first = 0, end = 0;
  const std::uint64_t* offsets = nullptr;  // offsets[k - first]; null: fixed-size records
  std::uint64_t record_size = 0;
  std::uint64_t offset(std::uint64_t k) const { return offsets ? offsets[k - first] : (k - first) * record_size; }
};
using OnWindow = std::function<void(const Window& window)>;

// How a streaming node's budget is carved: chunk memory first (read-ahead,
// shuffle workspace), then two write buffers per bucket.
struct SplitLayout {
  std::uint64_t chunk_memory_bytes = 0;
  std::uint64_t bucket_buffer_bytes = 0;
  bool chunks_gathered = false;  // known in advance: no chunk fits, each is gathered in windows
};

// Steps 1 and 2 of a split for one layout: groups of whole chunks read ahead
// and located in the chunk memory, then shuffled; step 3 asks for slices.
class ChunkGroups {
 public:
  virtual ~ChunkGroups() = default;
  // Waits for the bytes of the next group, from chunk i on, locates up to
  // kMaxChunkGroup whole chunks in them and starts reading ahead. Returns
  // how many; 0 means chunk i alone is larger than the chunk memory (then
  // call gather_chunk for it).
  virtual std::uint64_t next(std::uint64_t i) = 0;
  // 2. Shuffles the located chunks i .. i + count - 1 in one batch.
  virtual void shuffle(std::uint64_t i, std::uint64_t count) = 0;
  // 3. Appends positions [k0, k1) of shuffled chunk g of the group to
  //    `writer`. Called from several threads, one per bucket range.
  virtual void append_slice(std::uint64_t g, std::uint64_t k0, std::uint64_t k1, io::ByteSink& bucket) const = 0;
  // Chunk i (m records) in shuffled order, window by window, through the
  // whole chunk memory; reading resumes after it.
  virtual void gather_chunk(std::uint64_t i, std::uint64_t m, const core::VariablePhilox& f,
                            const OnWindow& on_window) = 0;
  // After the last chunk: nothing but what the layout may skip follows.
  virtual void finish() = 0;
};

class RecordLayout {
 public:
  virtual ~RecordLayout() = default;

  // Throws BudgetError unless a run of `records` records in `bytes` bytes
  // can go ahead within `budget` bytes.
  virtual void check_budget(std::uint64_t records, std::uint64_t bytes, std::uint64_t budget) const = 0;
  // Bytes of memory a node needs to run in RAM, and whether it does.
  virtual std::uint64_t in_memory_bytes(std::uint64_t records, std::uint64_t bytes, std::uint64_t budget) const = 0;
  virtual bool fits_in_memory(std::uint64_t records, std::uint64_t bytes, std::uint64_t budget) const = 0;

  // 2.3, a node that fits: its output goes to ctx.output in order. `root`
  // marks the input itself (text may skip blank records there).
  virtual void run_in_memory(const core::Node& node, const io::ByteExtents& data, bool root,
                             RunContext& ctx) const = 0;
  // A leaf larger than memory, in shuffled order through `on_window`.
  virtual void gather_leaf(const core::Node& node, const io::ByteExtents& data, bool root, RunContext& ctx,
                           const OnWindow& on_window) const = 0;

  // Streaming split of a node of `bytes` bytes into p buckets.
  virtual SplitLayout split_layout(std::uint64_t p, std::uint64_t budget) const = 0;
  // Scratch bytes bucket j gets; exact (no overflow) for fixed-size records.
  virtual std::uint64_t bucket_region_bytes(std::uint64_t node_bytes, std::uint64_t n,
                                            std::uint64_t bucket_records) const = 0;
  virtual bool buckets_may_overflow() const = 0;
  // Chunks [first_chunk, end_chunk) of `node`, whose bytes `data` holds
  // (starting with chunk first_chunk).
  virtual std::unique_ptr<ChunkGroups> open_chunk_groups(const core::Node& node, const io::ByteExtents& data,
                                                         bool root, std::uint64_t first_chunk, std::uint64_t end_chunk,
                                                         std::uint64_t chunk_memory_bytes, RunContext& ctx) const = 0;

  // Step 4 for small buckets: consecutive buckets that each run in a
  // group (records, bytes, with `workspace_bytes` of workspace) are read
  // with one request and run together from memory by
  // run_buckets_in_memory: buckets [first, end) of `node`, their bytes one
  // after the other at `input` (bucket_bytes[j - first] each), `workspace`
  // for the rest; their output goes to ctx.output in bucket order.
  virtual bool runs_in_group(std::uint64_t records, std::uint64_t bytes, std::uint64_t workspace_bytes) const = 0;
  virtual void run_buckets_in_memory(const core::Node& node, std::uint64_t p, std::uint64_t first, std::uint64_t end,
                                     std::span<const std::uint64_t> bucket_bytes, std::byte* input,
                                     std::byte* workspace, RunContext& ctx) const = 0;
};

}  // namespace extshuffle::driver
