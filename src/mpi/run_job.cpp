// mpi::run_job(): a Job's datasets across the ranks (distributed_run.hpp),
// committed as one (distributed_commit.hpp).
#include <algorithm>
#include <chrono>
#include <optional>

#include "outputs/distributed_commit.hpp"
#include "resume/job_resume.hpp"
#include "extshuffle/driver/job_files.hpp"
#include "extshuffle/driver/run_job.hpp"
#include "extshuffle/dataset/output_parts.hpp"
#include "extshuffle/errors.hpp"
#include "extshuffle/mpi/distributed_run.hpp"
#include "extshuffle/mpi/rank_failure.hpp"

namespace extshuffle::mpi {
namespace {

// The commit's notes and warnings of a dataset, after the run's own.
void take_messages(const RunResult& committed, DistributedResult& result) {
  result.notes.insert(result.notes.end(), committed.notes.begin(), committed.notes.end());
  result.warnings.insert(result.warnings.end(), committed.warnings.begin(), committed.warnings.end());
  result.output_warnings.insert(result.output_warnings.end(), committed.output_warnings.begin(),
                                committed.output_warnings.end());
}

}  // namespace

std::optional<std::uint64_t> checkpointed_seed(const std::string& directory) {
  return RankJournal::journalled_seed(directory);
}

std::vector<DistributedResult> run_job(const Job& job, Communicator& comm) {
  // Every path read and written, checked before any work, as on one machine.
  driver::JobFiles job_files;
  checkpoint(comm, [&] { job_files = driver::check_job_files(job); });
  // --checkpoint: the ranks agree on what the job resumes from, before any
  // input is counted (docs/mpi.md "A killed job"). --dry-run looks at none.
  std::optional<JobResume> resume;
  if (!job.options.run.checkpoint_dir.empty() && !job.options.run.dry_run) resume.emplace(job, comm);
  // --dry-run: extshuffle's own plan of the Job, from rank 0.
  JobResult plan;
  if (job.options.run.dry_run) {
    checkpoint(comm, [&] {
      if (comm.rank() != 0) return;
      Job looked = job;  // extshuffle's plan of the Job, without its DIR (a rank's is DIR/rank-R)
      looked.options.run.checkpoint_dir.clear();
      plan = driver::run_job(looked);
    });
  }
  DistributedCommit commit(job.options, job_files, comm);
  // Every input prepared (counted) before any output: aligned inputs must
  // hold as many records each.
  std::vector<DistributedInput> inputs;
  for (const JobDataset& dataset : job.datasets) {
    inputs.push_back(prepare_input(job.options, dataset, comm));
    if (inputs.back().records() != inputs.front().records()) {
      checkpoint(comm, [&] {
        dataset::check_aligned_count(job.datasets[0].inputs[0], inputs.front().records(), dataset.inputs[0],
                                     inputs.back().records());
      });
    }
  }
  std::vector<DistributedResult> results;
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    results.push_back(
        run_into(job.options, job.datasets[k], std::move(inputs[k]), comm, commit, resume ? &*resume : nullptr, k));
    if (k < plan.datasets.size()) results.back().dry_run_text.insert(0, plan.datasets[k].dry_run_text);
  }
  if (job.options.run.dry_run || results.empty()) return results;
  // The commit is the Job's: its seconds go to the last dataset's RANK lines.
  const auto t0 = std::chrono::steady_clock::now();
  commit.commit();
  if (resume) {
    if (comm.rank() == 0) {
      const std::vector<std::string> said = resume->describe();
      results.front().notes.insert(results.front().notes.begin(), said.begin(), said.end());
    }
    checkpoint(comm, [&] { resume->remove(); });
  }
  for (std::size_t k = 0; k < results.size(); ++k) take_messages(commit.committed(k), results[k]);
  const double mine = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const std::vector<double> seconds = comm.all_gather(mine);
  DistributedResult& last = results.back();
  for (RankStats& rank : last.ranks) rank.seconds_committing = seconds[rank.rank];
  last.stats.seconds += *std::max_element(seconds.begin(), seconds.end());
  return results;
}

}  // namespace extshuffle::mpi
