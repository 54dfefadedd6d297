// The commit of a distributed Job (docs/cli.md "The commit", docs/mpi.md
// "Shards, splits and the manifest"): every piece of every aligned dataset
// is written and fsynced by every rank that wrote into it; once all have,
// rank 0 publishes through extshuffle's one commit
// (driver/commit_sequence.hpp: the destinations' lock, leftovers removed,
// every file and the manifest prepared, then the renames with signals
// held, the manifest last, undone if one fails). With --manifest, each piece's bytes and xxh64
// are read back from the finished file by one of the ranks in turn. A rank
// that fails or is killed before that leaves no piece and no manifest: rank
// 0 removes the hidden files (or the next run does, when every rank was
// killed).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "extshuffle/dataset/manifest.hpp"
#include "extshuffle/driver/commit_sequence.hpp"
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
  const RunResult& committed(std::size_t k) const { return datasets_[k].result; }

 private:
  struct Dataset {
    std::unique_ptr<SharedPieces> files;
    PiecePlan plan;
    RunResult result;
    std::string pattern;
  };
  // Collective, with --manifest: every piece's size and xxh64, [2k] and
  // [2k + 1] for the job's piece k, each piece read back by one rank.
  std::vector<std::uint64_t> digest_pieces();
  // Rank 0: `dataset`'s files and manifest entries; its pieces are the
  // job's from `first_piece` on in `digests`.
  void prepare(Dataset& dataset, std::size_t first_piece, const std::vector<std::uint64_t>& digests);
  driver::CommitRenames prepare_all(const std::vector<std::uint64_t>& digests);
  void published();
  const JobOptions& options_;
  const driver::JobFiles& plan_;
  Communicator& comm_;
  std::vector<Dataset> datasets_;
  std::optional<dataset::ManifestWriter> manifest_;
};

// run() without its commit: the dataset's pieces written, synced by none,
// handed to `commit` with what the manifest says of them. Collective.
DistributedResult run_into(const JobOptions& options, const JobDataset& dataset, DistributedInput input,
                           Communicator& comm, DistributedCommit& commit);

}  // namespace extshuffle::mpi
