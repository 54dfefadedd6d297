// A walk that can be resumed (--checkpoint DIR, docs/cli.md "Resuming a
// run"): the root's split reports its natural points to a WalkCheckpoint,
// which makes them durable (the driver's journal), and a resumed walk starts
// from the last one made durable. The points:
//   - pass 1 (steps 1-3 of the root): a group of chunks, or a batch of
//     routed records, in the buckets: the next record and where it starts
//     in the root's data, and each bucket's stream so far (written, its
//     writes complete);
//   - the scatter done: every bucket's stream whole;
//   - pass 2 (step 4): the root's first buckets (or leaves' windows) output
//     in order, every byte of them handed to the sink.
// The root alone is checkpointed: a resumed run redoes at most the work
// since the last point (one group of chunks or a stretch of routed records
// in pass 1, one group of buckets or one window in pass 2). A root that is
// not a split (in RAM, a leaf in windows) is one pass and starts over.
// Every bucket of a checkpointed split keeps its CRC-32C, and one read back
// that does not match is damage (io/scratch_damage.hpp): never trusted.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>

#include "extshuffle/io/bucket_store.hpp"

namespace extshuffle::ioperm {

// Where a resumed walk starts: the last point made durable.
struct WalkResume {
  enum class Phase { kStart, kScatter, kBuckets };
  Phase phase = Phase::kStart;
  // kScatter: the root's records [0, next_record) are in its buckets, and
  // record next_record starts at byte data_offset of the root's data.
  std::uint64_t next_record = 0, data_offset = 0;
  // kBuckets: the root's first `destinations_done` destinations (buckets,
  // or the leaves' windows) are output, `records_emitted` records.
  std::uint64_t destinations_done = 0, records_emitted = 0;
  // The root's buckets: as they stood at the point (kScatter), or whole (kBuckets).
  io::SplitState buckets;
};

// What a split's steps call at their natural points (PlanWalk, and a
// rank's share through the seam, distributed_walk.hpp):
// pass 1, after a group of chunks or a batch of routed records: records
// before `next_record` are in the buckets, `consumed_bytes` of the data the
// scatter was given are spent;
using ScatterPoint = std::function<void(std::uint64_t next_record, std::uint64_t consumed_bytes)>;
// pass 2, after buckets (or windows) before `end` are output: `release`
// gives their scratch back, once the point is durable.
using EmitPoint = std::function<void(std::uint64_t end, std::function<void()> release)>;

// How far apart pass 1's points are, in bytes of the root's data a scatter
// spends (extshuffle's walk, and each rank's under extshuffle-mpi): 1/64 of
// its `data_bytes`, but not before each of its `streams` scratch streams (a
// bucket, a window, a rank's (source, bucket) pair) has about 2 MiB more,
// and at most what its chunks in memory hold (`chunk_bytes`: a point a
// group of chunks at least); never under 64 KiB. A point writes out every
// stream's buffered bytes and syncs them, each stream's new bytes a request
// of their own: with 150 windows, points 64 MiB apart made requests of 0.4
// MiB where a run without --checkpoint writes 2 MiB, and the walk waited
// 1.2 s in 62 points' flushes (0.2 s in 13 at 2 MiB a stream;
// docs/benchmarks.md).
inline std::uint64_t scatter_point_spacing_bytes(std::uint64_t data_bytes, std::uint64_t streams,
                                                 std::uint64_t chunk_bytes) {
  constexpr std::uint64_t kPointsPerPass = 64, kBytesPerStream = std::uint64_t{2} << 20;
  constexpr std::uint64_t kMinBytes = std::uint64_t{64} << 10;
  return std::max(kMinBytes, std::min(chunk_bytes, std::max(data_bytes / kPointsPerPass, streams * kBytesPerStream)));
}

class WalkCheckpoint {
 public:
  virtual ~WalkCheckpoint() = default;
  // Where this run starts (kStart for a fresh one).
  virtual const WalkResume& resume() const = 0;
  // Pass 1: whether to make a point now, `bytes` of the root's records
  // scattered since the last one into `streams` scratch streams (a point
  // costs every stream's buffered bytes written out and a sync).
  virtual bool scatter_point_due(std::uint64_t bytes, std::size_t streams) = 0;
  // A point of pass 1 (phase kScatter), every write of it complete.
  virtual void scattered(const WalkResume& point) = 0;
  // Pass 1 done: the root's buckets whole.
  virtual void scatter_done(const io::SplitState& buckets) = 0;
  // A point of pass 2 (phase kBuckets; `buckets` unused): every output byte
  // of its destinations handed to the sink. `release` gives their scratch
  // space back; it runs once the point is durable (a resume from an
  // earlier point still reads them).
  virtual void emitted(const WalkResume& point, std::function<void()> release) = 0;
  // Pass 2: whether a point now would be made durable soon. When not, the
  // split skips it (the output's buffers stay unflushed) and hands its
  // release to the next point it makes; the last one is always made.
  virtual bool emit_point_due() = 0;
  // Waits until every point is durable and every release has run. Throws
  // what making one durable threw.
  virtual void settle() = 0;
};

}  // namespace extshuffle::ioperm
