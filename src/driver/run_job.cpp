// run_job(): a Job's datasets, one after the other, and its manifest
// (driver/run_job.hpp).
#include "extshuffle/driver/run_job.hpp"

#include <optional>
#include <spdlog/spdlog.h>

#include "extshuffle/dataset/output_parts.hpp"
#include "extshuffle/errors.hpp"
#include "job_commit.hpp"
#include "extshuffle/driver/job_files.hpp"
#include "index_run.hpp"
#include "dataset_output.hpp"
#include "prepared_input.hpp"
#include "run_dataset.hpp"
#include "run_checkpoint.hpp"

namespace extshuffle::driver {
namespace {

// Aligned datasets (features and labels): the permutation depends on the
// seed and the record count only, so equal counts give aligned outputs.
// Every input is prepared (opened, counted) once, and the counts compared
// before any output is written.
std::vector<PreparedInput> prepare_aligned(const Job& job, RunCheckpoint* checkpoint) {
  std::vector<PreparedInput> inputs;
  for (const JobDataset& dataset : job.datasets) {
    inputs.push_back(prepare_input(job.options, dataset, {checkpoint, inputs.size()}));
    dataset::check_aligned_count(job.datasets[0].inputs[0], inputs.front().records(), dataset.inputs[0],
                                 inputs.back().records());
  }
  return inputs;
}

}  // namespace

std::string leftovers_line(const std::vector<std::string>& leftovers) {
  std::string line = "leftovers: " + std::to_string(leftovers.size()) +
                     " file(s) an interrupted run left, removed by this run's commit:";
  for (const std::string& path : leftovers) line += " '" + path + "'";
  return line + "\n";
}

JobResult run_job(const Job& job) {
  // Every path read and written, checked before any work (docs/conventions.md, The Job and its commit).
  const JobFiles files = check_job_files(job);
  spdlog::debug("plan: {} input file(s), {} output file(s) named up front, {} descriptor(s) at most",
                files.reads.size(), files.writes.size(), files.descriptors);
  // --manifest: opened first, so that a bad path fails before any work;
  // written last, with every output (JobCommit).
  JobCommit commit(job.options, files);
  // --checkpoint DIR: locked, and the Job checked against what it holds
  // before any work (docs/cli.md "Resuming a run").
  std::optional<RunCheckpoint> checkpoint;
  if (!job.options.run.checkpoint_dir.empty()) checkpoint.emplace(job);
  RunCheckpoint* resumable = checkpoint ? &*checkpoint : nullptr;
  JobResult result;
  if (job.options.index_only) {
    result.datasets = run_index_only(job.options, job.datasets, commit);
  } else if (job.datasets.size() == 1) {
    result.datasets.push_back(run_dataset(job.options, job.datasets[0], commit, {resumable, 0}));
  } else {
    std::vector<PreparedInput> inputs = prepare_aligned(job, resumable);
    for (std::size_t k = 0; k < inputs.size(); ++k) {
      result.datasets.push_back(
          run_prepared(job.options, std::move(inputs[k]), open_output(job.options, job.datasets[k]), commit));
    }
  }
  if (job.options.run.dry_run && !result.datasets.empty() && files.descriptors > 0) {
    result.datasets.back().dry_run_text += "descriptors: up to " + std::to_string(files.descriptors) + " open files (" +
                                           std::to_string(files.output_files) +
                                           " output files held until the commit)\n";
  }
  if (job.options.run.dry_run && !result.datasets.empty() && !files.leftovers.empty()) {
    result.datasets.back().dry_run_text += leftovers_line(files.leftovers);
  }
  if (job.options.run.dry_run && checkpoint && !result.datasets.empty()) {
    result.datasets.back().dry_run_text += checkpoint->refusal();
  }
  if (!job.options.run.dry_run) {
    spdlog::debug("commit: {} dataset output(s){}", result.datasets.size(),
                  job.options.run.manifest_path.empty() ? "" : " and the manifest");
    commit.commit(result);
    // Committed: nothing is left to resume.
    if (checkpoint) checkpoint->remove_files();
  }
  return result;
}

}  // namespace extshuffle::driver
