// What each room below the driver is told of a Job (docs/conventions.md,
// Rooms): its own slice of the options, built here from the Job's options in
// one place each, and the manifest's view of a dataset's run. The rooms below
// never see the Job's options whole; both tools build their slices here
// (shuf's modes theirs in driver/mode_options.hpp, the walk its own in
// driver/walk_options.hpp).
#pragma once

#include "extshuffle/dataset/dataset_options.hpp"
#include "extshuffle/dataset/manifest.hpp"
#include "extshuffle/job.hpp"
#include "extshuffle/run_result.hpp"

namespace extshuffle::driver {

// How the dataset's inputs are read.
dataset::DatasetOptions dataset_options(const JobOptions& options);

// How each dataset's output is cut into files.
dataset::OutputOptions output_options(const JobOptions& options);

// What the manifest records of the options (--manifest, --verify).
dataset::ManifestOptions manifest_options(const JobOptions& options);

// What the manifest records of one dataset's run.
dataset::ManifestEntry manifest_entry(const RunResult& run);

}  // namespace extshuffle::driver
