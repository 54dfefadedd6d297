#include "split_checkpoint.hpp"

#include <utility>

namespace extshuffle::ioperm {

SplitCheckpoint::SplitCheckpoint(WalkCheckpoint* checkpoint, io::BucketStore::Split& split, OutputLimiter& output,
                                 std::uint64_t leaf_records)
    : checkpoint_(checkpoint), split_(split), output_(output), leaf_records_(leaf_records) {
  if (!checkpoint_) return;
  split_.keep_checksums();
  const WalkResume& resume = checkpoint_->resume();
  if (resume.phase != WalkResume::Phase::kStart) split_.resume(resume.buckets);
  if (resume.phase == WalkResume::Phase::kBuckets) output_.resume(resume.records_emitted);
  last_point_offset_ = resume.phase == WalkResume::Phase::kScatter ? resume.data_offset : 0;
  const std::uint64_t base = last_point_offset_;
  on_scatter_ = [this, base](std::uint64_t next_record, std::uint64_t consumed_bytes) {
    const std::uint64_t at = base + consumed_bytes;
    if (!checkpoint_->scatter_point_due(at - last_point_offset_, split_.streams())) return;
    WalkResume point;
    point.phase = WalkResume::Phase::kScatter;
    point.next_record = next_record;
    point.data_offset = at;
    point.buckets = split_.checkpoint();
    checkpoint_->scattered(point);
    last_point_offset_ = at;
  };
  on_emit_ = [this](std::uint64_t end, std::function<void()> release) {
    WalkResume point;
    point.phase = WalkResume::Phase::kBuckets;
    point.destinations_done = end;
    point.records_emitted = output_.emitted();
    pending_releases_.push_back(std::move(release));
    if (!checkpoint_->emit_point_due()) {
      skipped_ = std::move(point);
      return;
    }
    emit(point);
  };
}

// Pass 2's point, with the releases of the points skipped since the last.
void SplitCheckpoint::emit(const WalkResume& point) {
  skipped_.reset();
  checkpoint_->emitted(point, [releases = std::exchange(pending_releases_, {})] {
    for (const auto& r : releases) r();
  });
}

SplitCheckpoint::~SplitCheckpoint() {
  if (!checkpoint_) return;
  try {
    checkpoint_->settle();
  } catch (...) {
    // A failure of the syncer: no point after it is made durable or released.
  }
}

bool SplitCheckpoint::scatters() const {
  return !checkpoint_ || checkpoint_->resume().phase != WalkResume::Phase::kBuckets;
}

std::uint64_t SplitCheckpoint::first_record() const {
  return checkpoint_ && checkpoint_->resume().phase == WalkResume::Phase::kScatter ? checkpoint_->resume().next_record
                                                                                   : 0;
}

std::uint64_t SplitCheckpoint::first_chunk() const { return first_record() / leaf_records_; }

io::ByteExtents SplitCheckpoint::data(const io::ByteExtents& all) const {
  if (!checkpoint_ || checkpoint_->resume().phase != WalkResume::Phase::kScatter) return all;
  return io::tail_of(all, checkpoint_->resume().data_offset);
}

void SplitCheckpoint::scatter_done() {
  if (checkpoint_ && scatters()) checkpoint_->scatter_done(split_.checkpoint());
}

std::uint64_t SplitCheckpoint::first_destination() const {
  return checkpoint_ && checkpoint_->resume().phase == WalkResume::Phase::kBuckets
             ? checkpoint_->resume().destinations_done
             : 0;
}

void SplitCheckpoint::settle() {
  if (!checkpoint_) return;
  if (skipped_) emit(WalkResume(*skipped_));
  checkpoint_->settle();
}

}  // namespace extshuffle::ioperm
