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

  // Whether every rank placed dataset k (only the commit is left).
  bool placed(std::size_t dataset) const { return agreed_placed_.count(dataset) != 0; }
  // This rank's --verify digest of what it wrote of dataset k (placed()).
  const std::string& written_state(std::size_t dataset) const { return journal_->placed().at(dataset); }
  // Rank 0: dataset k's temporaries to reopen (null: create them).
  const std::vector<JournalledPiece>* pieces(std::size_t dataset) const;

  // Durable records: rank 0's temporaries of dataset k; this rank's range
  // of dataset k placed and synced. Throw IoError.
  void record_pieces(std::size_t dataset, const std::vector<JournalledPiece>& pieces);
  void record_placed(std::size_t dataset, const std::string& written_state);
  // After the commit, on every rank: DIR/rank-R removed. Throws IoError.
  void remove();
  // What the job resumed from, a line a dataset (-v's notes, rank 0).
  std::vector<std::string> describe() const;

 private:
  std::optional<RankJournal> journal_;
  std::map<std::size_t, bool> agreed_placed_;
  std::size_t datasets_ = 0;
};

}  // namespace extshuffle::mpi
