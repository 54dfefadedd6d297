// A rank's step 4 with --checkpoint (docs/mpi.md "A killed job", *bucket j
// written*): after each group of buckets the walk outputs (a third of the
// memory budget at most, one bucket when larger), once at least
// kMinPointBytes were output since the last point, the rank's parts are
// flushed, its pieces synced and the point journalled: the next bucket, the
// output record and stream byte it starts at, where its piece goes on and
// --verify's digest so far. A rerun resumed after the exchange opens its
// sink there and runs the buckets after it, so it redoes at most one group.
// A range with a part spooled (text cut by bytes, a part whose offset
// needs other ranks' bytes), compressed or of tar samples makes no point:
// it starts over from the rank's first bucket.
#pragma once

#include <cstdint>
#include <memory>

#include "extshuffle/ioperm/walk_checkpoint.hpp"
#include "outputs/rank_range.hpp"
#include "outputs/rank_sink.hpp"
#include "outputs/shared_pieces.hpp"
#include "job_resume.hpp"

namespace extshuffle::mpi {

class RangePoints {
 public:
  // Less output than this between two points makes no point: a sync of
  // every piece is not worth a few KiB of redone work.
  static constexpr std::uint64_t kMinPointBytes = std::uint64_t{64} << 10;

  // Buckets [first_bucket, end_bucket) of dataset `dataset` are this rank's,
  // their output from stream byte `first_byte`; `resume` null: inert.
  RangePoints(JobResume* resume, std::size_t dataset, std::uint64_t first_bucket, std::uint64_t end_bucket,
              std::uint64_t first_byte);
  // Before the walk: `sink` and `range` resumed at the rank's journalled
  // point, if any. Returns the first bucket to run. Throws Error for a
  // point that is not one of this rank's buckets (not trusted).
  std::uint64_t start(RankSink& sink, RankRange& range);
  // The walk handed on `bytes` of output (before -n's cut).
  void handed(std::uint64_t bytes) { stream_byte_ += bytes; }
  // The walk's points (null when inert): each runs its release once made.
  const ioperm::EmitPoint* emit_points(RankSink& sink, SharedPieces& files, const RankRange& range);

 private:
  void make_point(std::uint64_t next_bucket, RankSink& sink, SharedPieces& files, const RankRange& range);
  JobResume* resume_;
  std::size_t dataset_;
  std::uint64_t first_bucket_, end_bucket_;
  std::uint64_t stream_byte_;
  std::uint64_t last_point_byte_;
  bool resumable_ = true;  // false once the range could not make a point
  ioperm::EmitPoint on_emit_;
};

}  // namespace extshuffle::mpi
