// One rank's part of a job's --checkpoint DIR (docs/mpi.md "A killed job"):
// the directory DIR/rank-R, created 0700 with extshuffle's rules and its own
// lock (io/checkpoint_directory.hpp), and its journal
// (io/checkpoint_journal.hpp): the Job's identity as this rank sees it, P
// among it; on rank 0 each dataset's hidden temporaries; each dataset's
// points, of which this rank's *placed* (its range of the output written,
// placed and synced) is the one built so far. What the ranks agree to
// resume from is job_resume.hpp's.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "extshuffle/io/checkpoint_directory.hpp"
#include "extshuffle/io/checkpoint_journal.hpp"

namespace extshuffle::mpi {

// A hidden temporary of a dataset's output, as rank 0 created it.
struct JournalledPiece {
  std::string path;         // the hidden file beside its destination (as the rank named it)
  std::string hidden_name;  // its name in that directory
  std::uint64_t inode = 0;
};

class RankJournal {
 public:
  // DIR/rank-`rank`: DIR created 0700 when missing, the rank's directory
  // made or opened and locked, its journal read. Throws UsageError for a
  // directory that is not ours, Error when another job holds it or its
  // journal is damaged, IoError.
  RankJournal(const std::string& directory, int rank);

  // What the journal held when it was opened: the identity (empty: none),
  // rank 0's temporaries and the datasets this rank had placed (with
  // --verify's digest of what it wrote).
  const std::string& identity() const { return identity_; }
  const std::map<std::size_t, std::vector<JournalledPiece>>& pieces() const { return pieces_; }
  const std::map<std::size_t, std::string>& placed() const { return placed_; }
  const std::string& path() const { return directory_.path(); }

  // The journal replaced by `identity` and what the job resumes from (the
  // points the ranks agreed on; every later one dropped). Throws IoError.
  void restart(const std::string& identity, const std::map<std::size_t, std::vector<JournalledPiece>>& pieces,
               const std::map<std::size_t, std::string>& placed);
  // Durable records (each appended and synced). Throws IoError.
  void record_pieces(std::size_t dataset, const std::vector<JournalledPiece>& pieces);
  void record_placed(std::size_t dataset, const std::string& written_state);
  // After the commit: the journal and the lock removed, then DIR/rank-R.
  void remove();

  // The identity's "--seed" in DIR/rank-0's journal, read without taking
  // its lock (the seed a rerun without --seed takes); nothing when none.
  static std::optional<std::uint64_t> journalled_seed(const std::string& directory);

 private:
  io::CheckpointDirectory directory_;
  std::optional<io::CheckpointJournal> journal_;
  std::string identity_;
  std::map<std::size_t, std::vector<JournalledPiece>> pieces_;
  std::map<std::size_t, std::string> placed_;
};

// DIR/rank-R.
std::string rank_directory(const std::string& directory, int rank);

}  // namespace extshuffle::mpi
