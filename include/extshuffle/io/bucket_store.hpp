// Scratch space for the buckets of streaming nodes (docs/conventions.md, The walk): one
// region per bucket, filled through per-bucket writers with write-behind,
// overflow extents when a bucket outgrows its region (variable-size
// records), read back as ByteExtents, and discarded as soon as it is spent.
//
// Space is taken as a stack: a split takes the space above everything in
// use, its buckets' children stack above it, and the split gives its space
// back when it ends. The store works on any BlockFile, so tests run it on the
// memory-backed BlockFile::in_memory().
#pragma once

#include <atomic>
#include <cstdint>
#include <span>
#include <vector>

#include "extshuffle/io/block_file.hpp"
#include "extshuffle/io/byte_extents.hpp"
#include "extshuffle/io/byte_sink.hpp"
#include "extshuffle/io/crc32c.hpp"
#include "extshuffle/io/write_behind.hpp"

namespace extshuffle::io {

// Scratch requests are aligned to this many bytes (O_DIRECT's page size).
inline constexpr std::uint64_t kScratchAlign = 4096;

// A bucket's stream as a checkpoint keeps it (docs/cli.md "Resuming a
// run"): its bytes, their CRC-32C (io/crc32c.hpp) and where they lie in the
// scratch file, in order.
struct StoredStream {
  std::uint64_t bytes = 0;
  std::uint32_t crc32c = 0;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> extents;  // (offset, bytes)
};

// A split's buckets as a checkpoint keeps them: where its space starts, the
// top of its overflow extents, and each bucket's stream.
struct SplitState {
  std::uint64_t base = 0, overflow_top = 0;
  std::vector<StoredStream> streams;
};

// One bucket's byte stream, written behind (io/write_behind.hpp: two buffers,
// one written asynchronously while the other fills) into its region, and
// past it into overflow extents. Writers of different buckets may be used by
// different threads at once: the only thing they share is the overflow top,
// taken with an atomic add.
class BucketWriter final : public ByteSink {
 public:
  // `overflow_top` (null when the region cannot overflow) is the first free
  // byte of scratch space, shared by the split's writers. A writer that is
  // not `kept` discards what it is given (a bucket past -n). Bytes past a
  // region that cannot overflow throw Error (io/scratch_damage.hpp):
  // only damaged position tags send a bucket more records than the plan.
  BucketWriter(BlockFile& scratch, std::uint64_t region_offset, std::uint64_t region_bytes,
               std::atomic<std::uint64_t>* overflow_top, std::byte* buffers, std::uint64_t buffer_bytes, bool kept);

  void append(const std::byte* data, std::uint64_t bytes) override;
  // Writes what is buffered; the write completes in the background.
  void flush() { writer_.flush(); }
  // Flushes and waits for every write.
  void finish() { writer_.finish(); }

  // Where the bucket's bytes are, in order (complete after finish()).
  const ByteExtents& stored() const { return writer_.stored(); }
  // Bytes handed to scratch writes since the last call.
  std::uint64_t take_unreported_bytes();

  // From now on, the CRC-32C of every byte appended is kept (a
  // checkpointed split's: read back, each bucket is checked against it),
  // taken as the buffers are written (io/write_behind.hpp).
  void keep_checksum() { writer_.keep_checksum(kCrc32cStart); }
  // After finish(): the CRC-32C of the stream so far.
  std::uint32_t checksum() const { return writer_.checksum(); }
  // After finish(): the stream so far. resume(): before the first append,
  // the stream continues one that a checkpoint kept.
  StoredStream state() const;
  void resume(const StoredStream& stream, BlockFile& scratch);
  // Whether the stream holds bytes of an earlier run (resume() with some):
  // only those are checked when read back. Bytes this process wrote and
  // reads again are trusted as an unchecked bucket's are: a run without
  // --checkpoint checks neither, and the check is half the checksums' cost.
  bool inherited() const { return inherited_; }

 private:
  WriteBehind writer_;
  std::uint64_t reported_bytes_ = 0;
  bool kept_;
  bool inherited_ = false;
};

class BucketStore {
 public:
  // Scratch space of `scratch` from `first_free` up is the store's.
  BucketStore(BlockFile& scratch, std::uint64_t first_free) : scratch_(scratch), top_(first_free) {}

  // The buckets of one streaming node.
  class Split {
   public:
    // Bucket j gets a region of region_bytes[j] (rounded up to kScratchAlign
    // when `may_overflow`, so overflow extents stay aligned; exact
    // otherwise, so consecutive buckets are adjacent and a run of them reads
    // back with one request), and two buffers of `buffer_bytes` carved in
    // order from `buffers`. Buckets with kept[j] false are not stored (-n).
    Split(BucketStore& store, std::span<const std::uint64_t> region_bytes, std::span<const bool> kept,
          bool may_overflow, std::byte* buffers, std::uint64_t buffer_bytes);
    Split(const Split&) = delete;
    Split& operator=(const Split&) = delete;
    ~Split();  // discards what is left (unless checkpointed) and gives the space back

    BucketWriter& writer(std::uint64_t j) { return writers_[j]; }
    // Bytes handed to scratch since the last call, over all writers; call
    // between scatters on one thread.
    std::uint64_t take_written_bytes();
    // Flushes every writer and waits; the buckets are then readable and
    // children's splits stack above this one's overflow. Returns the bytes
    // written since the last take_written_bytes().
    std::uint64_t finish();
    // Where bucket j's bytes are (after finish()).
    const ByteExtents& bucket(std::uint64_t j) const { return writers_[j].stored(); }
    // The same, with its CRC-32C to check when checksums are kept and the
    // bucket holds bytes of an earlier run (BucketWriter::inherited()).
    ByteExtents checked_bucket(std::uint64_t j) const;
    bool keeps_checksums() const { return checksummed_; }
    // Buckets [first, end) as one extent list: one request when adjacent.
    ByteExtents buckets(std::uint64_t first, std::uint64_t end) const;
    // Drops bucket j's bytes from the page cache and the disk now, while
    // they may still be dirty, rather than all at the end.
    void discard(std::uint64_t j);
    // Where the space given back when the split ends lies: [base, top).
    std::uint64_t base() const { return base_; }
    // The scratch streams its scatter writes (one per bucket).
    std::size_t streams() const { return writers_.size(); }

    // A checkpointed split (docs/cli.md "Resuming a run"): every bucket's
    // CRC-32C kept from now on (before the first append), and its space
    // never given back by the destructor: a run that fails leaves its
    // buckets for the run that resumes it (discard() still gives back a
    // bucket that is spent).
    void keep_checksums();
    std::uint32_t checksum(std::uint64_t j) const { return writers_[j].checksum(); }
    // Every writer's buffered bytes issued and every write completed, then
    // the streams as they stand; the writers go on from there. Throws
    // IoError.
    SplitState checkpoint();
    // Before the first append: the buckets continue the streams of `state`,
    // a checkpoint of a split laid out alike (the same regions from the
    // same base). Throws Error when it is not.
    void resume(const SplitState& state);

   private:
    BucketStore& store_;
    std::uint64_t base_;
    std::atomic<std::uint64_t> overflow_top_;
    std::vector<BucketWriter> writers_;
    bool checksummed_ = false;
  };

 private:
  BlockFile& scratch_;
  std::uint64_t top_;  // first byte not in use
};

}  // namespace extshuffle::io
