// make_job(): the checks of a Job that need no input (extshuffle/job.hpp).
#include <algorithm>

#include "extshuffle/errors.hpp"
#include "extshuffle/job.hpp"

namespace extshuffle {

Job make_job(JobOptions options, std::vector<JobDataset> datasets) {
  if (options.threads < 1) throw UsageError("invalid thread count " + std::to_string(options.threads));
  if (datasets.empty()) throw UsageError("no dataset to shuffle");
  const bool generated = options.echo || options.integer_range;
  if (!options.checkpoint_dir.empty() && (generated || options.repeat)) {
    throw UsageError("--checkpoint: -e, -i and -r shuffle no input file, there is nothing to resume: drop it");
  }
  for (const JobDataset& dataset : datasets) {
    if (dataset.inputs.empty()) throw UsageError("a dataset needs at least one input");
    if (dataset.output.empty()) throw UsageError("an output name cannot be empty");
    const bool reads_stdin = std::find(dataset.inputs.begin(), dataset.inputs.end(), "-") != dataset.inputs.end();
    if (options.dry_run && reads_stdin && !generated) {
      throw UsageError("--dry-run needs an INPUT file, not standard input");
    }
    if (datasets.size() > 1 && dataset.inputs.size() != 1) {
      throw UsageError("aligned inputs: give one INPUT per -o");
    }
    if (datasets.size() > 1 && reads_stdin) {
      throw UsageError("standard input cannot be one of several aligned inputs");
    }
    // A resumed run reads its inputs again and continues its output files.
    if (!options.checkpoint_dir.empty() && reads_stdin) {
      throw UsageError("--checkpoint: standard input cannot be read again by a resumed run: name an input file");
    }
    if (!options.checkpoint_dir.empty() && dataset.output == "-") {
      throw UsageError("--checkpoint: standard output cannot be continued by a resumed run: name an output file");
    }
  }
  return Job{std::move(options), std::move(datasets)};
}

}  // namespace extshuffle
