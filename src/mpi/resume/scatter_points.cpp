#include "scatter_points.hpp"

#include <utility>

#include "job_resume.hpp"

namespace extshuffle::mpi {

ScatterPoints::ScatterPoints(JobResume& resume, std::size_t dataset, ReceivedBuckets& received,
                             ExchangeTargets& targets, JournalledExchange plan, const JournalledScatter* from,
                             std::uint64_t first_record, std::uint64_t spacing_bytes)
    : resume_(resume), dataset_(dataset), received_(received), targets_(targets), plan_(std::move(plan)),
      first_record_(from ? from->next_record : first_record), base_offset_(from ? from->data_offset : 0),
      spacing_bytes_(spacing_bytes), next_record_(first_record_), offset_(base_offset_),
      last_point_offset_(base_offset_) {
  // The walk reports the bytes it spent of the data it was given, which
  // starts at base_offset_.
  // The wish is for the point after the next round: made where the next
  // group, as large as this one, would take the scatter `spacing_bytes`
  // past the last point.
  after_group_ = [this](std::uint64_t next_record, std::uint64_t consumed_bytes) {
    const std::uint64_t group_bytes = base_offset_ + consumed_bytes - offset_;
    next_record_ = next_record;
    offset_ = base_offset_ + consumed_bytes;
    if (targets_.take_point()) make();
    targets_.want_point(offset_ + group_bytes - last_point_offset_ >= spacing_bytes_);
  };
}

ScatterPoints::~ScatterPoints() {
  if (durable_.valid()) durable_.wait();
}

// The buckets' writes complete here (their state is the point's); their
// sync and the record, which the walk need not wait for, on their own
// thread, once the point before is durable.
void ScatterPoints::make() {
  settle();
  JournalledScatter point{targets_.rounds_done(), next_record_, offset_, plan_};
  point.received.buckets = received_.checkpoint();
  durable_ =
      std::async(std::launch::async, [this, point = std::move(point)] { resume_.record_scattered(dataset_, point); });
  last_point_offset_ = offset_;
  targets_.want_point(false);
}

void ScatterPoints::settle() {
  if (durable_.valid()) durable_.get();
}

}  // namespace extshuffle::mpi
