// The root's split of a checkpointed walk (ioperm/walk_checkpoint.hpp): where
// its scatter starts on a resumed run, the points its steps report, and
// what its buckets' read-back is checked against. Without a checkpoint (any
// other split, or a run without --checkpoint) it does nothing: the scatter
// starts at the node's first record and no point is made.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "extshuffle/io/bucket_store.hpp"
#include "extshuffle/ioperm/walk_checkpoint.hpp"
#include "run_context.hpp"

namespace extshuffle::ioperm {

class SplitCheckpoint {
 public:
  // `checkpoint` null: inert. Otherwise the split keeps its buckets'
  // checksums, continues the buckets of a resumed run, and the limiter
  // counts the records a resumed pass 2 had output.
  SplitCheckpoint(WalkCheckpoint* checkpoint, io::BucketStore::Split& split, OutputLimiter& output,
                  std::uint64_t leaf_records);
  // Settles the checkpoint, its failure swallowed (the walk's own error,
  // if any, is the one reported): a walk that throws leaves no release
  // of its points to run on the syncer's thread after the split is gone,
  // and the releases of points it skipped are dropped: their scratch stays
  // for the run that resumes.
  ~SplitCheckpoint();
  SplitCheckpoint(const SplitCheckpoint&) = delete;
  SplitCheckpoint& operator=(const SplitCheckpoint&) = delete;

  // Whether steps 1-3 run (a run resumed in pass 2 skips them), and from
  // where: the first chunk, the first record (a routed scatter may resume
  // inside a chunk) and the node's bytes from that record on.
  bool scatters() const;
  std::uint64_t first_chunk() const;
  std::uint64_t first_record() const;
  io::ByteExtents data(const io::ByteExtents& all) const;
  // The points of steps 1-3 (null when inert), and the scatter done.
  const ScatterPoint* scatter_points() const { return checkpoint_ ? &on_scatter_ : nullptr; }
  void scatter_done();
  // Step 4: the first destination still to output, and its points.
  std::uint64_t first_destination() const;
  const EmitPoint* emit_points() const { return checkpoint_ ? &on_emit_ : nullptr; }
  // After step 4 has output every destination: the last point made (one
  // skipped is made now), and every point durable.
  void settle();

 private:
  WalkCheckpoint* checkpoint_;
  io::BucketStore::Split& split_;
  OutputLimiter& output_;
  std::uint64_t leaf_records_;
  std::uint64_t last_point_offset_ = 0;
  ScatterPoint on_scatter_;
  EmitPoint on_emit_;
  void emit(const WalkResume& point);
  // Pass 2's last point skipped (emit_point_due() false), and the releases
  // of the points skipped since the last one made: they go with the next.
  std::optional<WalkResume> skipped_;
  std::vector<std::function<void()>> pending_releases_;
};

}  // namespace extshuffle::ioperm
