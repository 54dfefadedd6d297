// One rank's part of a job's --checkpoint DIR (docs/mpi.md "A killed job"):
// the directory DIR/rank-R, created 0700 with extshuffle's rules and its own
// lock (io/checkpoint_directory.hpp), and its journal
// (io/checkpoint_journal.hpp): the Job's identity as this rank sees it, P
// among it; on rank 0 each dataset's hidden temporaries; each dataset's
// points (docs/mpi.md "A killed job": *scattered through round k*,
// *exchanged*, *bucket j written*, *placed*). What the ranks agree to
// resume from is job_resume.hpp's.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "extshuffle/io/block_file.hpp"
#include "extshuffle/io/bucket_store.hpp"
#include "extshuffle/io/checkpoint_directory.hpp"
#include "extshuffle/io/checkpoint_journal.hpp"

namespace extshuffle::mpi {

// A hidden temporary of a dataset's output, as rank 0 created it.
struct JournalledPiece {
  std::string path;         // the hidden file beside its destination (as the rank named it)
  std::string hidden_name;  // its name in that directory
  std::uint64_t inode = 0;
};

// What a rank's journal says of its exchange of a dataset: the plan it
// was exchanged under, the position tags' width and the buckets it
// received (their pairs' streams).
struct JournalledExchange {
  std::string plan;  // the rank's part of the root's plan (distributed_run.cpp's exchange_plan)
  std::uint32_t tag_width = 0;
  io::SplitState buckets;
};

// What a rank's journal says of a point of its scatter and exchange of a
// dataset (pass 1): after `round` rounds of the exchange (the same rounds on
// every rank), the rank's records before `next_record` scattered, its data
// spent up to byte `data_offset` of what its chunks hold, and the buckets
// it received so far (their pairs' streams, written and synced).
struct JournalledScatter {
  std::uint64_t round = 0;
  std::uint64_t next_record = 0, data_offset = 0;
  JournalledExchange received;
};

// What a rank's journal says of its step 4 of a dataset (*bucket j
// written*): the walk's output of its buckets before `next_bucket` written
// to the pieces and synced; the range resumes at output record `record`,
// stream byte `stream_byte`, in place as `piece` says, with --verify's
// digest `written_state` of what it wrote.
struct JournalledBuckets {
  std::uint64_t next_bucket = 0;
  std::uint64_t record = 0;
  std::uint64_t stream_byte = 0;
  std::uint64_t head_bytes = 0;   // PiecePoint's
  std::uint64_t piece_bytes = 0;  // PiecePoint's
  std::string written_state;
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
  const std::map<std::size_t, JournalledExchange>& exchanged() const { return exchanged_; }
  // The last three points of each dataset's scatter, in order: the ranks'
  // points are after the same rounds, and one rank's last durable point is
  // at most two ahead of another's (resume/scatter_points.hpp).
  const std::map<std::size_t, std::vector<JournalledScatter>>& scattered() const { return scattered_; }
  // The last bucket point of each dataset.
  const std::map<std::size_t, JournalledBuckets>& buckets_written() const { return buckets_written_; }
  const std::string& path() const { return directory_.path(); }

  // The journal replaced by `identity` and what the job resumes from (the
  // points the ranks agreed on; every later one dropped). Throws IoError.
  void restart(const std::string& identity, const std::map<std::size_t, std::vector<JournalledPiece>>& pieces,
               const std::map<std::size_t, JournalledExchange>& exchanged,
               const std::map<std::size_t, std::string>& placed,
               const std::map<std::size_t, JournalledBuckets>& buckets_written,
               std::map<std::size_t, std::vector<JournalledScatter>> scattered = {});
  // Dataset k's scratch file, DIR/rank-R/scratch-K, emptied unless `keep`
  // (the buckets of an exchange the job resumes after). Throws IoError.
  std::unique_ptr<io::BlockFile> scratch(std::size_t dataset, bool keep);
  // What this rank wrote to dataset k's scratch file reaches the disk.
  // Throws IoError.
  void sync_scratch(std::size_t dataset);
  // Durable records (each appended and synced). Throws IoError.
  void record_pieces(std::size_t dataset, const std::vector<JournalledPiece>& pieces);
  void record_placed(std::size_t dataset, const std::string& written_state);
  void record_exchanged(std::size_t dataset, const JournalledExchange& exchange);
  void record_scattered(std::size_t dataset, const JournalledScatter& point);
  void record_buckets_written(std::size_t dataset, const JournalledBuckets& point);
  // After the commit: the journal, the scratch files of `datasets` and the
  // lock removed, then DIR/rank-R.
  void remove(std::size_t datasets);

  // The identity's "--seed" in DIR/rank-0's journal, read without taking
  // its lock (the seed a rerun without --seed takes); nothing when none.
  static std::optional<std::uint64_t> journalled_seed(const std::string& directory);

 private:
  io::CheckpointDirectory directory_;
  std::optional<io::CheckpointJournal> journal_;
  std::string identity_;
  std::map<std::size_t, std::vector<JournalledPiece>> pieces_;
  std::map<std::size_t, std::string> placed_;
  std::map<std::size_t, JournalledExchange> exchanged_;
  std::map<std::size_t, std::vector<JournalledScatter>> scattered_;
  std::map<std::size_t, JournalledBuckets> buckets_written_;
  std::map<std::size_t, int> scratch_fds_;  // owned by their BlockFiles
};

// DIR/rank-R.
std::string rank_directory(const std::string& directory, int rank);

}  // namespace extshuffle::mpi
