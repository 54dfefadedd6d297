#include "range_points.hpp"

#include "extshuffle/errors.hpp"

namespace extshuffle::mpi {

RangePoints::RangePoints(JobResume* resume, std::size_t dataset, std::uint64_t first_bucket, std::uint64_t end_bucket,
                         std::uint64_t first_byte)
    : resume_(resume), dataset_(dataset), first_bucket_(first_bucket), end_bucket_(end_bucket),
      stream_byte_(first_byte), last_point_byte_(first_byte) {}

std::uint64_t RangePoints::start(RankSink& sink, RankRange& range) {
  const JournalledBuckets* point = resume_ ? resume_->buckets_written(dataset_) : nullptr;
  if (!point) return first_bucket_;
  if (point->next_bucket < first_bucket_ || point->next_bucket > end_bucket_ || point->stream_byte < stream_byte_) {
    throw Error("checkpoint journal: bucket " + std::to_string(point->next_bucket) +
                " is not one of this rank's buckets " + std::to_string(first_bucket_) + "-" +
                std::to_string(end_bucket_) + ": not trusted");
  }
  const std::uint64_t record = range.resume_at(point->next_bucket);
  sink.resume({{point->head_bytes, point->piece_bytes}, point->written_state}, record, point->stream_byte);
  stream_byte_ = last_point_byte_ = point->stream_byte;
  return point->next_bucket;
}

const ioperm::EmitPoint* RangePoints::emit_points(RankSink& sink, SharedPieces& files, const RankRange& range) {
  if (!resume_) return nullptr;
  on_emit_ = [this, &sink, &files, &range](std::uint64_t end, const std::function<void()>& release) {
    // The last group needs none: *placed* follows it.
    if (resumable_ && end < end_bucket_ && stream_byte_ - last_point_byte_ >= kMinPointBytes) {
      make_point(end, sink, files, range);
    }
    release();
  };
  return &on_emit_;
}

void RangePoints::make_point(std::uint64_t next_bucket, RankSink& sink, SharedPieces& files, const RankRange& range) {
  const std::optional<RankSink::Point> point = sink.point();
  if (!point) {
    resumable_ = false;  // spooled or compressed: never resumable later either
    return;
  }
  files.sync();
  resume_->record_buckets_written(dataset_, {next_bucket, range.bucket_position(next_bucket), stream_byte_,
                                             point->piece.head_bytes, point->piece.piece_bytes, point->written_state});
  last_point_byte_ = stream_byte_;
}

}  // namespace extshuffle::mpi
