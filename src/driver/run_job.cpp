// run_job(): a Job's datasets, one after the other, and its manifest
// (driver/run_job.hpp).
#include "extshuffle/driver/run_job.hpp"

#include <optional>

#include "extshuffle/dataset/manifest.hpp"
#include "extshuffle/errors.hpp"
#include "prepared_input.hpp"

namespace extshuffle::driver {
namespace {

// Aligned datasets (features and labels): the permutation depends on the
// seed and the record count only, so equal counts give aligned outputs.
// Every input is prepared (opened, counted) once, and the counts compared
// before any output is written.
std::vector<PreparedInput> prepare_aligned(const Job& job) {
  std::vector<PreparedInput> inputs;
  for (const JobDataset& dataset : job.datasets) {
    inputs.push_back(prepare_input(job.options, dataset));
    if (inputs.back().records() != inputs.front().records()) {
      throw InputError("inputs differ in record count: '" + job.datasets[0].inputs[0] + "' has " +
                       std::to_string(inputs.front().records()) + ", '" + dataset.inputs[0] + "' has " +
                       std::to_string(inputs.back().records()));
    }
  }
  return inputs;
}

}  // namespace

JobResult run_job(const Job& job) {
  // --manifest: opened first, so that a bad path fails before any work;
  // written last, once every output is in place.
  std::optional<dataset::ManifestWriter> manifest;
  if (!job.options.manifest_path.empty() && !job.options.dry_run) manifest.emplace(job.options);
  JobResult result;
  if (job.datasets.size() == 1) {
    result.datasets.push_back(run_dataset(job.options, job.datasets[0]));
  } else {
    std::vector<PreparedInput> inputs = prepare_aligned(job);
    for (std::size_t k = 0; k < inputs.size(); ++k) {
      result.datasets.push_back(run_prepared(job.options, job.datasets[k], std::move(inputs[k])));
    }
  }
  if (manifest) {
    for (const RunResult& run : result.datasets) manifest->add(run);
    manifest->commit();
  }
  return result;
}

}  // namespace extshuffle::driver
