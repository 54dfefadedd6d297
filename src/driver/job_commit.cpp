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
// included), named in warnings and the manifest; every file made durable.
void JobCommit::prepare(JobResult& result) {
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
  if (manifest_) {
    for (const RunResult& run : result.datasets) manifest_->add(manifest_entry(run));
    manifest_->prepare();
  }
}

void JobCommit::publish() {
  for (auto& output : outputs_) output->publish();
  if (options_.clean) {
    for (auto& output : outputs_) dataset::remove_stale_pieces(output->stale_pieces(), inputs_);
  }
  if (manifest_) manifest_->publish();
}

void JobCommit::commit(JobResult& result) {
  const int late = commit_in_order(
      destinations_, inputs_, [&] { prepare(result); }, [&] { publish(); });
  if (late != 0 && !result.datasets.empty())
    result.datasets.back().output_warnings.push_back(late_signal_warning(late));
}

}  // namespace extshuffle::driver
