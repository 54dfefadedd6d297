// The commit of a Job as one (driver/job_commit.hpp).
#include "job_commit.hpp"

namespace extshuffle::driver {

JobCommit::JobCommit(const JobOptions& options) {
  if (!options.manifest_path.empty() && !options.dry_run) manifest_.emplace(options);
}

void JobCommit::add(std::unique_ptr<dataset::ShardedOutput> output) { outputs_.push_back(std::move(output)); }

void JobCommit::commit(const JobResult& result) {
  for (auto& output : outputs_) output->prepare_commit();
  if (manifest_) {
    for (const RunResult& run : result.datasets) manifest_->add(run);
    manifest_->prepare();
  }
  for (auto& output : outputs_) output->publish();
  if (manifest_) manifest_->publish();
}

}  // namespace extshuffle::driver
