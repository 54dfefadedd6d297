// The rooms' slices of a Job's options (driver/job_slices.hpp).
#include "extshuffle/driver/job_slices.hpp"

namespace extshuffle::driver {

dataset::DatasetOptions dataset_options(const JobOptions& options) {
  dataset::DatasetOptions input;
  input.format = options.format;
  input.record_size = options.record_size;
  input.zero_terminated = options.zero_terminated;
  input.ignore_zeros = options.ignore_zeros;
  input.header_lines = options.header_lines;
  input.skip_empty = options.skip_empty;
  input.verify = options.verify;
  input.repeat = options.repeat;
  return input;
}

dataset::OutputOptions output_options(const JobOptions& options) {
  dataset::OutputOptions output;
  output.splits = options.splits;
  output.shard_count = options.shard_count;
  output.shard_bytes = options.shard_bytes;
  output.clean = options.clean;
  return output;
}

dataset::ManifestOptions manifest_options(const JobOptions& options) {
  dataset::ManifestOptions manifest;
  manifest.path = options.manifest_path;
  manifest.seed = options.seed;
  manifest.constants = options.constants;
  manifest.input = dataset_options(options);
  manifest.head_count = options.head_count;
  manifest.output = output_options(options);
  return manifest;
}

dataset::ManifestEntry manifest_entry(const RunResult& run) {
  return {run.inputs, run.format, run.stats.records, run.records_written, run.outputs, run.stale_pieces};
}

}  // namespace extshuffle::driver
