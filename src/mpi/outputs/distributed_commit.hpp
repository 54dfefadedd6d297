// The commit of a distributed Job (docs/cli.md "The commit", docs/mpi.md
// "Shards, splits and the manifest"): every piece of every aligned dataset
// is written and fsynced by every rank that wrote into it; once all have,
// each piece's size and xxh64 are read back through its hidden file's
// descriptor (io/file_digest.hpp), by one of the ranks in turn, before any
// rename; then rank 0 publishes through extshuffle's one commit
// (dataset/output_commit.hpp: the lock of this Job's destinations,
// leftovers removed, every file and the manifest prepared, then the renames
// with signals held, the manifest last, undone if one fails), each
// dataset's shared pieces a participant. A rank that fails or is killed
// before that leaves no piece and no manifest: rank 0 removes the hidden
// files (or the next run does, when every rank was killed).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "extshuffle/dataset/output_commit.hpp"
#include "extshuffle/driver/job_files.hpp"
#include "extshuffle/job.hpp"
#include "extshuffle/mpi/communicator.hpp"
#include "extshuffle/mpi/distributed_run.hpp"
#include "extshuffle/run_result.hpp"
#include "piece_plan.hpp"
#include "shared_pieces.hpp"

namespace extshuffle::mpi {

class DistributedCommit {
 public:
  // Collective: rank 0 opens the manifest's temporary (--manifest), so that
  // a bad path fails before any work. Throws RankFailure on every rank.
  // `files`: the Job's (driver/job_files.hpp): its inputs, never removed,
  // and its destinations.
  DistributedCommit(const JobOptions& options, const driver::JobFiles& files, Communicator& comm);
  ~DistributedCommit();
  // A dataset's written pieces; `result` says what the manifest needs of
  // the dataset but its files (inputs, format, records), filled here.
  void add(std::unique_ptr<SharedPieces> files, PiecePlan plan, RunResult result, std::string pattern);
  // Collective: syncs, then commits every dataset's pieces and the
  // manifest. Throws RankFailure on every rank.
  void commit();
  // After commit(), on rank 0: what the commit says of the `k`th dataset
  // added, for the job's result (stale pieces in its warnings, or its notes
  // with --clean; a signal during the publish in the last one's
  // output_warnings). Empty on the other ranks.
  const RunResult& committed(std::size_t k) const { return datasets_[k]->result; }

 private:
  // A dataset's shared pieces as a participant of the commit (rank 0).
  struct Dataset final : dataset::CommitParticipant {
    std::unique_ptr<SharedPieces> files;
    PiecePlan plan;
    RunResult result;
    std::string output;                    // the pattern, as given
    std::vector<std::string> split_names;  // --split's
    std::vector<OutputFileInfo> pieces;    // their sizes and xxh64 once digest_pieces() has read them
    const std::string& pattern() const override { return output; }
    std::vector<std::string> find_stale() const override;
    std::vector<OutputFileInfo> manifest_files() const override { return pieces; }
    void prepare() override { files->prepare_commit(); }
    std::vector<io::PendingRename> pending_renames() const override { return files->pending_renames(); }
    void published() override { files->published(); }
  };
  // Collective: every piece's size and xxh64 (with --manifest), each piece
  // read back by one rank, into each dataset's `pieces`.
  void digest_pieces();
  const JobOptions& options_;
  Communicator& comm_;
  std::vector<std::unique_ptr<Dataset>> datasets_;
  std::optional<dataset::OutputCommit> commit_;  // rank 0's
};

class JobResume;

// run() without its commit: the dataset's pieces written, synced by none
// (--checkpoint: by every rank, and journalled as placed), handed to
// `commit` with what the manifest says of them; `resume` (null without
// --checkpoint) says what the job resumes from, `dataset_index` is the
// dataset's in the Job. Collective.
DistributedResult run_into(const JobOptions& options, const JobDataset& dataset, DistributedInput input,
                           Communicator& comm, DistributedCommit& commit, JobResume* resume, std::size_t dataset_index);

}  // namespace extshuffle::mpi
