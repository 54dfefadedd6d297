// make_job(): the checks of a Job that need no input (extshuffle/job.hpp).
#include <algorithm>

#include "extshuffle/errors.hpp"
#include "extshuffle/job.hpp"

namespace extshuffle {
namespace {

// --index and --index-only (docs/cli.md "Record indexes").
void check_index_options(const JobOptions& options, const std::vector<JobDataset>& datasets) {
  const bool generated = options.mode.echo || options.mode.integer_range || options.input.repeat;
  if (!options.run.checkpoint_dir.empty() && (options.index || options.index_only)) {
    // A resumed file's index would miss the record ends written before the
    // stop, and an index pass has nothing worth resuming (docs/cli.md).
    throw UsageError(
        "--checkpoint: --index and --index-only are not resumed: index the output with --index-only "
        "after the shuffle");
  }
  if (options.index_only) {
    if (options.index)
      throw UsageError("--index and --index-only cannot be combined: --index-only writes indexes alone");
    if (generated) throw UsageError("--index-only indexes INPUT files: not -e, -i or --repeat");
    const bool shuffle_options = options.output.shard_count > 0 || options.output.shard_bytes > 0 ||
                                 !options.output.splits.empty() || !options.run.manifest_path.empty() ||
                                 options.output.head_count != UINT64_MAX || options.input.verify ||
                                 options.run.dry_run || options.output.clean;
    if (shuffle_options) {
      throw UsageError(
          "--index-only writes indexes, no shuffle: --shards, --shard-size, --split, --manifest, --clean, "
          "-n, --verify and --dry-run do not apply");
    }
    for (const JobDataset& dataset : datasets) {
      if (std::find(dataset.inputs.begin(), dataset.inputs.end(), "-") != dataset.inputs.end()) {
        throw UsageError(
            "--index-only: standard input cannot be indexed: records are read at offsets, which a "
            "stream does not have");
      }
    }
  }
  if (!options.index) return;
  if (generated || options.output.head_count == 0) {
    throw UsageError("--index indexes the shuffled records of INPUT files: not -e, -i, --repeat or -n 0");
  }
  for (const JobDataset& dataset : datasets) {
    if (dataset.output == "-") {
      throw UsageError("--index writes each output file's index beside it: give -o FILE, not standard output");
    }
  }
}

}  // namespace

Job make_job(JobOptions options, std::vector<JobDataset> datasets) {
  if (options.run.threads < 1) throw UsageError("invalid thread count " + std::to_string(options.run.threads));
  if (datasets.empty()) throw UsageError("no dataset to shuffle");
  const bool generated = options.mode.echo || options.mode.integer_range;
  if (!options.run.checkpoint_dir.empty() && (generated || options.input.repeat)) {
    throw UsageError("--checkpoint: -e, -i and -r shuffle no input file, there is nothing to resume: drop it");
  }
  for (const JobDataset& dataset : datasets) {
    if (dataset.inputs.empty()) throw UsageError("a dataset needs at least one input");
    if (dataset.output.empty()) throw UsageError("an output name cannot be empty");
    const bool reads_stdin = std::find(dataset.inputs.begin(), dataset.inputs.end(), "-") != dataset.inputs.end();
    if (options.run.dry_run && reads_stdin && !generated) {
      throw UsageError("--dry-run needs an INPUT file, not standard input");
    }
    if (datasets.size() > 1 && dataset.inputs.size() != 1) {
      throw UsageError("aligned inputs: give one INPUT per -o");
    }
    if (datasets.size() > 1 && reads_stdin) {
      throw UsageError("standard input cannot be one of several aligned inputs");
    }
    // A resumed run reads its inputs again and continues its output files.
    if (!options.run.checkpoint_dir.empty() && reads_stdin) {
      throw UsageError("--checkpoint: standard input cannot be read again by a resumed run: name an input file");
    }
    if (!options.run.checkpoint_dir.empty() && dataset.output == "-") {
      throw UsageError("--checkpoint: standard output cannot be continued by a resumed run: name an output file");
    }
  }
  check_index_options(options, datasets);
  return Job{std::move(options), std::move(datasets)};
}

}  // namespace extshuffle
