// Pass 1's points of a rank (--checkpoint DIR, docs/mpi.md "A killed job"):
// after a round of the root's exchange (exchange_targets.hpp), the buckets
// the rank received so far written out and synced, then where its scatter
// goes on journalled (resume/job_resume.hpp). A rank wishes a point once its
// scatter has spent `spacing_bytes` of its chunks' data since its last; the
// wish travels in the next round's counts, and every rank makes a point
// after each round any rank wished one after: the ranks' points are after
// the same rounds, and a job resumes from the last round every rank's
// journal holds. A rank whose chunks are all scattered makes its points in
// the rounds it still takes part in (when_done()).
#pragma once

#include <cstddef>
#include <cstdint>
#include <future>

#include "extshuffle/ioperm/walk_checkpoint.hpp"
#include "exchange_targets.hpp"
#include "received_buckets.hpp"
#include "rank_journal.hpp"

namespace extshuffle::mpi {

class JobResume;

class ScatterPoints {
 public:
  // `plan`: the rank's part of the root's plan and the tags' width, as the
  // points journal them (their buckets filled in at each point). `from`:
  // the point a resumed scatter goes on from (null: the rank's first
  // record, `first_record`, and its data's first byte).
  ScatterPoints(JobResume& resume, std::size_t dataset, ReceivedBuckets& received, ExchangeTargets& targets,
                JournalledExchange plan, const JournalledScatter* from, std::uint64_t first_record,
                std::uint64_t spacing_bytes);
  ScatterPoints(const ScatterPoints&) = delete;
  ScatterPoints& operator=(const ScatterPoints&) = delete;

  // Where the scatter starts: its first record, and the byte of the
  // rank's chunks' data that record starts at.
  std::uint64_t first_record() const { return first_record_; }
  std::uint64_t first_offset() const { return base_offset_; }
  // The walk's call after each group of chunks (and its round).
  const ioperm::ScatterPoint* after_group() const { return &after_group_; }
  // A point with the rank's scatter over (its position the last one).
  void when_done() { make(); }
  // After the rounds: the last point durable. Throws what making it threw.
  void settle();
  // Waits for the last point, swallowing its failure (a failed walk's).
  ~ScatterPoints();

 private:
  void make();

  JobResume& resume_;
  std::size_t dataset_;
  ReceivedBuckets& received_;
  ExchangeTargets& targets_;
  JournalledExchange plan_;
  std::uint64_t first_record_, base_offset_, spacing_bytes_;
  std::uint64_t next_record_, offset_;  // where the scatter stands
  std::uint64_t last_point_offset_;
  ioperm::ScatterPoint after_group_;
  // The last point's sync and record, made on a thread of its own while
  // the next rounds run; the next point waits for it (so a rank's last
  // durable point is at most two behind another's: each keeps three).
  std::future<void> durable_;
};

}  // namespace extshuffle::mpi
