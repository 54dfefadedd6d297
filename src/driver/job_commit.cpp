// The commit of a Job as one (driver/job_commit.hpp).
#include "job_commit.hpp"

#include <optional>

#include "extshuffle/driver/job_manifest.hpp"

namespace extshuffle::driver {

JobCommit::JobCommit(const JobOptions& options, const JobFiles& files)
    : clean_(options.output.clean),
      commit_({files.destinations, files.read_files, options.output.clean, options.run.waiting},
              job_manifest(options)) {}

void JobCommit::add(std::unique_ptr<dataset::ShardedOutput> output) {
  commit_.add(*output);
  outputs_.push_back(std::move(output));
}

void JobCommit::commit(JobResult& result) {
  std::vector<dataset::ManifestEntry> entries;
  for (const RunResult& run : result.datasets) entries.push_back(manifest_entry(run));
  const dataset::CommitReport report = commit_.commit(std::move(entries));
  for (std::size_t k = 0; k < report.stale_pieces.size() && k < result.datasets.size(); ++k) {
    RunResult& run = result.datasets[k];
    run.stale_pieces = report.stale_pieces[k];
    if (!report.stale_lines[k].empty()) (clean_ ? run.notes : run.warnings).push_back(report.stale_lines[k]);
  }
  if (result.datasets.empty()) return;
  // Said even with -q: about the files on disk.
  std::vector<std::string>& warnings = result.datasets.back().output_warnings;
  warnings.insert(warnings.end(), report.warnings.begin(), report.warnings.end());
}

}  // namespace extshuffle::driver
