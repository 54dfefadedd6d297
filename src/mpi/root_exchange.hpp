// Step 3 of a rank's distributed run (distributed_run.cpp): the root's split,
// its path agreed on by every rank, scattered and exchanged so that each
// rank's buckets land in its own scratch space.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "distribution.hpp"
#include "extshuffle/io/bucket_store.hpp"
#include "extshuffle/ioperm/distributed_walk.hpp"
#include "rank_run.hpp"
#include "received_buckets.hpp"
#include "resume/rank_journal.hpp"

namespace extshuffle::mpi {

// The root split's path, the same on every rank (a routed split tags the
// records its buckets receive): chunks in memory where every rank's share
// of the budget holds whole chunks, else routed record by record.
ioperm::NodePath agree_on_path(RankRun& r, const Distribution& d);

// --checkpoint (docs/mpi.md "A killed job"): the points of the scatter and
// exchange journalled (resume/scatter_points.hpp), and the one every rank
// made that a rerun goes on from.
struct ExchangeCheckpoint {
  std::string plan;                         // the rank's part of the root's plan (exchange_or_resume)
  const JournalledScatter* from = nullptr;  // null: from the start
};

// 3. The root's split, exchanged: each rank's buckets land in its scratch
// space (`store`), described by `received`; with `checkpointed`, points
// made as it goes, from its `from` on. Returns the tag width (0 unless
// routed).
std::uint32_t scatter_and_exchange(RankRun& r, const Distribution& d, ioperm::NodePath path, io::BucketStore& store,
                                   std::optional<ReceivedBuckets>& received,
                                   const ExchangeCheckpoint* checkpointed = nullptr);

// Resuming a job every rank had exchanged (--checkpoint: docs/mpi.md "A
// killed job"): `received` laid out as scatter_and_exchange() lays it
// out, its pairs those of `buckets` (journalled with `tag_width`), each
// bucket checked as step 4 reads it. Throws RankFailure on every rank.
void resume_exchange(RankRun& r, const Distribution& d, ioperm::NodePath path, io::BucketStore& store,
                     std::uint32_t tag_width, const io::SplitState& buckets, std::optional<ReceivedBuckets>& received);

// 3. The root's split exchanged, or, with --checkpoint, resumed from the
// point every rank made (inside or after the exchange, resume/job_resume.hpp:
// the root's plan drawn again must be the point's, else the journal is not
// trusted), its buckets in `store` (on the journal's scratch file); points
// made as it goes, and the exchange journalled once whole. Returns the tag
// width.
std::uint32_t exchange_or_resume(RankRun& r, const Distribution& d, ioperm::NodePath path, io::BucketStore& store,
                                 std::optional<ReceivedBuckets>& received);

}  // namespace extshuffle::mpi
