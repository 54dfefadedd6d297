#include "dataset_output.hpp"

namespace extshuffle::driver {
namespace {

dataset::OutputSpec output_spec(const JobOptions& options, const JobDataset& dataset) {
  dataset::OutputSpec spec;
  spec.pattern = dataset.output;
  spec.options = options.output;
  spec.threads = options.run.threads;
  spec.read_back = options.input.verify;
  spec.index = options.index;
  spec.resumable = !options.run.checkpoint_dir.empty();
  return spec;
}

}  // namespace

std::unique_ptr<dataset::ShardedOutput> open_output(const JobOptions& options, const JobDataset& dataset) {
  return options.run.dry_run ? nullptr : std::make_unique<dataset::ShardedOutput>(output_spec(options, dataset));
}

}  // namespace extshuffle::driver
