// A job run with --checkpoint DIR (docs/mpi.md "A killed job"): every rank
// opens its DIR/rank-R (rank_journal.hpp), and the ranks agree, before any
// input is counted, on what the job resumes from: another P or another
// identity on any rank refuses the job (UsageError, nothing removed);
// otherwise each dataset resumes from the minimum point over the ranks,
// and every rank's journal is rewritten to say just that. Rank 0 reopens
// the temporaries its journal names; after the commit every rank removes
// its DIR/rank-R.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "extshuffle/job.hpp"
#include "extshuffle/mpi/communicator.hpp"
#include "rank_journal.hpp"

namespace extshuffle::mpi {

class JobResume {
 public:
  // Collective, inside no checkpoint: opens DIR/rank-R and agrees. Throws
  // RankFailure on every rank (exit 2: another P, another identity, a
  // directory not ours; exit 1: DIR/rank-R in use, a damaged journal).
  JobResume(const Job& job, Communicator& comm);

  // The point every rank made durable for dataset k, in order.
  enum class Point { kStart = 0, kScattered = 1, kExchanged = 2, kPlaced = 3 };
  Point point(std::size_t dataset) const { return agreed_.at(dataset); }
  // Whether every rank placed dataset k (only the commit is left).
  bool placed(std::size_t dataset) const { return point(dataset) == Point::kPlaced; }
  // This rank's exchange of dataset k (point() kExchanged or later).
  const JournalledExchange& exchanged(std::size_t dataset) const { return journal_->exchanged().at(dataset); }
  // This rank's point of dataset k's scatter every rank made (point()
  // kScattered): after the same round on every rank.
  const JournalledScatter& scattered(std::size_t dataset) const { return scattered_.at(dataset); }
  // Dataset k's scratch file in DIR/rank-R, its buckets kept when the job
  // resumes inside or after its exchange. Throws IoError.
  std::unique_ptr<io::BlockFile> scratch(std::size_t dataset) {
    return journal_->scratch(dataset, point(dataset) != Point::kStart);
  }
  // This rank's last *bucket j written* of dataset k, when the job resumes
  // after its exchange (its own: a rank's range and buckets are its own
  // once the exchange is whole); null: its step 4 runs from its first
  // bucket.
  const JournalledBuckets* buckets_written(std::size_t dataset) const;
  // This rank's --verify digest of what it wrote of dataset k (placed()).
  const std::string& written_state(std::size_t dataset) const { return journal_->placed().at(dataset); }
  // Rank 0: dataset k's temporaries to reopen (null: create them).
  const std::vector<JournalledPiece>* pieces(std::size_t dataset) const;

  // Durable records: rank 0's temporaries of dataset k; this rank's range
  // of dataset k placed and synced. Throw IoError.
  void record_pieces(std::size_t dataset, const std::vector<JournalledPiece>& pieces);
  void record_placed(std::size_t dataset, const std::string& written_state);
  // This rank's buckets of dataset k whole: the scratch file synced, then
  // the exchange journalled.
  void record_exchanged(std::size_t dataset, const JournalledExchange& exchange);
  // A point of this rank's scatter of dataset k (resume/scatter_points.hpp):
  // the scratch file synced, then the point journalled.
  void record_scattered(std::size_t dataset, const JournalledScatter& point);
  // This rank's step 4 of dataset k written through a bucket, its pieces
  // synced by the caller.
  void record_buckets_written(std::size_t dataset, const JournalledBuckets& point);
  // After the commit, on every rank: DIR/rank-R removed. Throws IoError.
  void remove();
  // What the job resumed from, a line a dataset (-v's notes, rank 0).
  std::vector<std::string> describe() const;

 private:
  void agree_on_round(std::size_t dataset, Communicator& comm,
                      std::map<std::size_t, std::vector<JournalledScatter>>& kept);

  std::optional<RankJournal> journal_;
  std::map<std::size_t, Point> agreed_;
  std::map<std::size_t, JournalledScatter> scattered_;  // per dataset resumed inside its exchange
  // Per dataset resumed inside its exchange: the record each rank's scatter
  // goes on from, for describe().
  std::map<std::size_t, std::vector<std::uint64_t>> resumed_records_;
  // Per dataset resumed after its exchange: the bucket each rank resumes
  // from (UINT64_MAX: its first), for describe().
  std::map<std::size_t, std::vector<std::uint64_t>> resumed_buckets_;
  std::size_t datasets_ = 0;
};

}  // namespace extshuffle::mpi
