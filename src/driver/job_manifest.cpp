// What the manifest is told of a Job (driver/job_manifest.hpp).
#include "extshuffle/driver/job_manifest.hpp"

namespace extshuffle::driver {

std::optional<dataset::ManifestOptions> job_manifest(const JobOptions& options) {
  if (options.run.manifest_path.empty() || options.run.dry_run) return std::nullopt;
  return dataset::ManifestOptions{options.run, options.input, options.output};
}

dataset::ManifestEntry manifest_entry(const RunResult& run) {
  return {run.inputs, run.format, run.stats.records, run.records_written, run.outputs, run.stale_pieces};
}

}  // namespace extshuffle::driver
