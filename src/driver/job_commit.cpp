// The commit of a Job as one (driver/job_commit.hpp).
#include "job_commit.hpp"

#include "extshuffle/dataset/stale_pieces.hpp"
#include "extshuffle/driver/commit_sequence.hpp"
#include "extshuffle/driver/job_slices.hpp"

namespace extshuffle::driver {

JobCommit::JobCommit(const JobOptions& options, const JobFiles& files)
    : options_(options), inputs_(files.read_files), destinations_(files.destinations) {
  if (!options.manifest_path.empty() && !options.dry_run) manifest_.emplace(manifest_options(options));
}

void JobCommit::add(std::unique_ptr<dataset::ShardedOutput> output) { outputs_.push_back(std::move(output)); }

// Under the lock: the pieces of older runs (a run that committed meanwhile
// included), named in warnings and the manifest; every file made durable
// and given its hidden name; the renames, every output's, then the
// manifest's, checked against the outputs in place just before it.
CommitRenames JobCommit::prepare(JobResult& result) {
  CommitRenames prepared;
  for (std::size_t k = 0; k < outputs_.size() && k < result.datasets.size(); ++k) {
    dataset::ShardedOutput& output = *outputs_[k];
    RunResult& run = result.datasets[k];
    output.find_stale();
    run.stale_pieces = output.stale_pieces();
    if (!run.stale_pieces.empty()) {
      (options_.clean ? run.notes : run.warnings)
          .push_back(dataset::stale_warning(output.spec().pattern, options_.clean, run.stale_pieces));
    }
    output.prepare_commit();
  }
  for (const auto& output : outputs_) {
    for (io::PendingRename& rename : output->pending_renames()) prepared.renames.push_back(std::move(rename));
  }
  prepared.check_before = prepared.renames.size();
  if (manifest_) {
    for (const RunResult& run : result.datasets) manifest_->add(manifest_entry(run));
    manifest_->prepare();
    if (auto rename = manifest_->pending_rename()) prepared.renames.push_back(std::move(*rename));
    prepared.check = [this] { manifest_->check_outputs(); };
  }
  return prepared;
}

void JobCommit::published() {
  for (auto& output : outputs_) output->published();
  if (manifest_) manifest_->published();
  if (options_.clean) {
    for (auto& output : outputs_) dataset::remove_stale_pieces(output->stale_pieces(), inputs_);
  }
}

void JobCommit::commit(JobResult& result) {
  CommitSteps steps;
  steps.prepare = [&] { return prepare(result); };
  steps.published = [&] { published(); };
  const CommitOutcome outcome = commit_in_order(destinations_, inputs_, steps, options_.waiting);
  if (result.datasets.empty()) return;
  std::vector<std::string>& warnings = result.datasets.back().output_warnings;
  warnings.insert(warnings.end(), outcome.warnings.begin(), outcome.warnings.end());
  if (outcome.late_signal != 0) warnings.push_back(late_signal_warning(outcome.late_signal));
}

}  // namespace extshuffle::driver
