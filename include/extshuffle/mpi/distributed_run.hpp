// One extshuffle run on the P ranks of an MPI job (extshuffle-mpi): Gustedt's
// ParPerm over the root split of the canonical plan, so the output is byte
// for byte that of extshuffle on one machine, for every P, budget and thread
// count (docs/design.md, "Several machines"; docs/mpi.md). The input and the
// output are on a file system every rank sees; each rank's scratch space
// (-T) is its own. Every call here is collective.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "extshuffle/job.hpp"
#include "extshuffle/run_result.hpp"
#include "extshuffle/mpi/communicator.hpp"

namespace extshuffle::mpi {

// What one rank did (--stats prints one RANK line per rank).
struct RankStats {
  std::uint64_t rank = 0;
  std::uint64_t chunks = 0, buckets = 0;  // top-level chunks scattered, buckets owned
  std::uint64_t splits_drawn = 0;         // matrix splits drawn for the counts (the rows are the driver's)
  std::uint64_t rounds = 0, sub_rounds = 0;
  std::uint64_t bytes_sent = 0, bytes_received = 0;  // records' bytes over MPI
  std::uint64_t count_bytes_sent = 0;                // the counts' bytes over MPI
  std::uint64_t bytes_read = 0, bytes_written = 0;   // input, scratch and output
  std::uint64_t input_bytes_read = 0;                // of which the input's records, held or scattered
  std::uint64_t layout_bytes_read = 0;               // and the input's counting pass (and an archive's index)
  std::uint64_t output_bytes = 0;
  std::uint64_t peak_rss_bytes = 0;
  double seconds_counting = 0;    // opening the input, counting text records, the counts
  double seconds_scattering = 0;  // steps 1-3 of the root's split, exchange included
  double seconds_exchanging = 0;  // of which: the rounds of counts and bytes
  double seconds_buckets = 0;     // this rank's buckets, through the driver, to its output range
  double seconds_committing = 0;  // fsync, agreement, rename
  double seconds = 0;
};

struct DistributedResult {
  // The job's totals: records and bytes as one run; bytes read and written
  // summed over the ranks; seconds and peak RSS the largest of any rank.
  RunStats stats;
  // The root's split routed its records one by one (chunks larger than a
  // rank's share of memory), the same on every rank.
  bool routed = false;
  // Every rank's stats on rank 0; this rank's alone on the others.
  std::vector<RankStats> ranks;
  // With --dry-run, on rank 0: extshuffle's plan and schedule, then one line
  // a rank with its share of the records and their bytes (nothing is run).
  std::string dry_run_text;
  // On rank 0, for its main to say (the library prints nothing), as
  // RunResult's: notes under -v (stale pieces removed by --clean), warnings
  // unless -q (tar members skipped, records a --split leaves out, stale
  // pieces of an older run), and warnings about the files on disk, said
  // even with -q (a signal that came while the output was being published).
  // Empty on the other ranks, so that each is said once.
  std::vector<std::string> notes;
  std::vector<std::string> warnings;
  std::vector<std::string> output_warnings;
};

class DistributedCommit;  // the library's own
class JobResume;          // the library's own: --checkpoint's (docs/mpi.md "A killed job")

// An input opened on every rank, its format detected, its records counted
// and its top-level chunks split among the ranks. Move-only.
class DistributedInput {
 public:
  DistributedInput(DistributedInput&&) noexcept;
  DistributedInput& operator=(DistributedInput&&) noexcept;
  ~DistributedInput();
  std::uint64_t records() const;

  struct State;  // the library's own

 private:
  explicit DistributedInput(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
  friend DistributedInput prepare_input(const JobOptions& options, const JobDataset& dataset, Communicator& comm);
  friend DistributedResult run_into(const JobOptions& options, const JobDataset& dataset, DistributedInput input,
                                    Communicator& comm, DistributedCommit& commit, JobResume* resume,
                                    std::size_t dataset_index);
};

// Checks what extshuffle-mpi supports (UsageError for standard input or
// output, compressed files, generated inputs, and the options it does not
// take), opens dataset.inputs[0] on every rank, and counts its records
// (text: each rank its byte range). Throws RankFailure, the same on every
// rank (rank_failure.hpp).
DistributedInput prepare_input(const JobOptions& options, const JobDataset& dataset, Communicator& comm);

// The seed a job with --checkpoint DIR recorded in DIR/rank-0 (a rerun
// without --seed takes it); nothing when DIR holds none. Throws UsageError
// for a directory that is not ours, Error for a damaged journal.
std::optional<std::uint64_t> checkpointed_seed(const std::string& directory);

// Runs a Job (extshuffle/job.hpp) across the ranks of `comm`, every rank
// calling it with the same Job: each dataset's input prepared (opened,
// counted) before any output, aligned datasets' counts compared, then each
// shuffled into its output, and every output committed as one: the
// destinations are untouched unless every rank succeeds. One result a
// dataset, in order.
// With --checkpoint DIR (JobOptions::checkpoint_dir) each rank journals in
// DIR/rank-R and a rerun of the same job on the same P resumes from the
// point every rank made durable (docs/mpi.md "A killed job"). Throws
// RankFailure, agreed on by every rank (a usage error, before any work,
// for a DIR that holds another job's checkpoint or another P's).
std::vector<DistributedResult> run_job(const Job& job, Communicator& comm);

}  // namespace extshuffle::mpi
