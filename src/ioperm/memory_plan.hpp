// A node of the canonical plan run in RAM with its records held once
// (docs/conventions.md, The walk; Gustedt's IOPerm, one level after another):
//   1-3. the node's chunks arrive in plan order from a RecordSource, a batch
//        at a time; each is shuffled and its slices are copied straight to
//        their buckets' places in the node buffer, which so ends in bucket
//        order (records small enough to shuffle in place), or each record is
//        copied to its place through the chunk's index permutation (larger
//        records, which a chunk-sized copy would not fit);
//   4.   each bucket is then a node of its own: leaves are shuffled (or
//        gathered by index) and handed on in order; a bucket that splits
//        again takes a temporary of its own size, 1/p of the node.
// Memory: the node buffer (its records once) plus workspace_bytes(). The
// output never depends on which strategy ran, the batch size or threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <future>

#include "extshuffle/core/plan.hpp"
#include "extshuffle/ioperm/shuffle_options.hpp"

namespace extshuffle::ioperm {

// Called with consecutive pieces of the node's output, in order.
using EmitOutput = std::function<void(const std::byte* data, std::size_t bytes)>;
// Whether output position `first` (of the whole run) is wanted at all (-n).
using WantedFrom = std::function<bool(std::uint64_t first)>;

// A node's records in plan order, one range at a time.
class RecordSource {
 public:
  virtual ~RecordSource() = default;
  // Records [first, first + count); consecutive calls ask for consecutive
  // ranges. The bytes stay valid until the next call.
  virtual const std::byte* records(std::uint64_t first, std::uint64_t count) = 0;
};

// Records already in memory.
class MemorySource final : public RecordSource {
 public:
  MemorySource(const std::byte* records, std::size_t record_size) : records_(records), record_size_(record_size) {}
  const std::byte* records(std::uint64_t first, std::uint64_t) override { return records_ + first * record_size_; }

 private:
  const std::byte* records_;
  std::size_t record_size_;
};

// The 4-byte indices 0, 1, 2, ... (the record indices a text node shuffles),
// made as asked for in a buffer of `capacity` indices.
class IndexSource final : public RecordSource {
 public:
  IndexSource(std::uint32_t* buffer, std::uint64_t capacity) : buffer_(buffer), capacity_(capacity) {}
  const std::byte* records(std::uint64_t first, std::uint64_t count) override;

 private:
  std::uint32_t* buffer_;
  std::uint64_t capacity_;
};

// How the plan moves records: shuffled in place in batches of chunks (fast
// for small records), or through index permutations record by record (no
// chunk-sized copy: large records, or a tight budget).
enum class MemoryMode { kShuffle, kIndex };

class MemoryPlan {
 public:
  // Records whose chunk is at most kMaxShuffledChunkBytes are shuffled in
  // place; larger ones move by index (a batch of 4 KiB-record chunks would
  // take gigabytes).
  static bool shuffles_chunks(const ShuffleOptions& o);
  static MemoryMode fastest_mode(const ShuffleOptions& o) {
    return shuffles_chunks(o) ? MemoryMode::kShuffle : MemoryMode::kIndex;
  }
  // Chunks a batch of a node of n records holds: one a thread, so that no
  // chunk's bijection is evaluated twice (a chunk split across threads is
  // evaluated twice), but no more than keep the batch's three buffers (a
  // chunk buffer, a file source's two) within held_once_workspace_bytes():
  // 48 MiB at two threads and 8-byte records.
  static std::uint64_t batch_chunks(std::uint64_t n, const ShuffleOptions& o);
  // Bytes of one batch of up to `n` records (the chunk buffer, and each of
  // a file source's two read buffers).
  static std::uint64_t batch_bytes(std::uint64_t n, const ShuffleOptions& o);
  // What a node of `records_bytes` may use in RAM beside its records to be
  // held once (tuning::kInRamWorkspaceBytes).
  static std::uint64_t held_once_workspace_bytes(std::uint64_t records_bytes);
  // Workspace a node of n records needs beside its buffer: the chunk buffer
  // or the index permutation and staging, and the temporaries of the split
  // levels below the first.
  static std::uint64_t workspace_bytes(std::uint64_t n, const ShuffleOptions& o, MemoryMode mode);
  // Index mode: records gathered through a permutation are staged this many
  // bytes at a time (a 16th of a leaf, between 64 KiB and kIndexStagingBytes).
  static std::uint64_t index_staging_bytes(std::uint64_t n, const ShuffleOptions& o);

  // `workspace` holds workspace_bytes() of the largest node run.
  MemoryPlan(const ShuffleOptions& o, MemoryMode mode, std::byte* workspace, EmitOutput emit, WantedFrom wanted = {});
  // Waits for output handed to another thread (overlap_output).
  ~MemoryPlan();
  MemoryPlan(const MemoryPlan&) = delete;
  MemoryPlan& operator=(const MemoryPlan&) = delete;

  // Step 4 overlapped: batches of leaves go to `emit` on a thread of their
  // own while the next batch is made. Shuffle mode alternates between the
  // workspace and `second` (batch_bytes() of the largest node run, free
  // once the first level is done: a file source's read buffers); index
  // mode (`second` unused) gathers into the two halves of its staging.
  // `emit` is then called from that thread, one call at a time and in
  // order, and every call has returned when run() or run_buckets() returns
  // (or throws what `emit` threw).
  void overlap_output(std::byte* second) {
    second_ = second;
    overlap_ = true;
  }
  // Seconds the driving thread waited for the output thread.
  double output_wait_seconds() const { return output_wait_seconds_; }

  // Runs `node` whose records `source` gives in plan order; `node_buffer`
  // has room for them (unused when the node is a leaf).
  void run(const core::Node& node, RecordSource& source, std::byte* node_buffer);
  // Step 4 alone, for a node whose first level is done: `node_buffer` holds
  // its records in bucket order (for a leaf: in plan order).
  // (It only reads them: for a leaf they may be a read-only mapping.)
  void run_buckets(const core::Node& node, const std::byte* node_buffer);

 private:
  void scatter(const core::Node& node, RecordSource& source, std::byte* node_buffer, std::byte* workspace);
  void run_buckets(const core::Node& node, const std::byte* node_buffer, std::byte* workspace);
  void emit_leaves(const core::Node& node, std::uint64_t p, std::uint64_t j0, std::uint64_t j1,
                   const std::byte* node_buffer, std::byte* workspace);
  // Index mode: `count` records gathered through `permutation` into
  // `target`, in pieces that the threads take in turn.
  void gather_in_pieces(const std::byte* records, const std::uint32_t* permutation, std::uint64_t count,
                        std::byte* target) const;
  bool wanted(std::uint64_t first) const { return !wanted_ || wanted_(first); }
  // Hands `bytes` at `data` on: on the output thread when `async`.
  void emit_batch(const std::byte* data, std::size_t bytes, bool async);
  // Waits for the output thread's last batch (and rethrows its error).
  void drain();

  ShuffleOptions o_;  // the run's part, by reference, and the size of what moves
  bool shuffles_;
  std::size_t r_;
  int threads_;
  std::byte* workspace_;
  EmitOutput emit_;
  WantedFrom wanted_;
  std::byte* second_ = nullptr;  // overlap_output's buffer
  bool overlap_ = false;         // overlap_output was called
  int next_buffer_ = 0;          // which of workspace / second_ the next leaf batch fills
  std::future<void> emitting_;   // the batch on the output thread
  double output_wait_seconds_ = 0;
};

}  // namespace extshuffle::ioperm
