// What the manifest (--manifest, dataset/manifest.hpp) is told of a Job:
// the slices of its options that define the output, whole, and each
// dataset's run. Both tools' commits build it here.
#pragma once

#include <optional>

#include "extshuffle/dataset/manifest.hpp"
#include "extshuffle/job.hpp"
#include "extshuffle/run_result.hpp"

namespace extshuffle::driver {

// The manifest's options; nullopt without --manifest, or with --dry-run
// (which writes nothing).
std::optional<dataset::ManifestOptions> job_manifest(const JobOptions& options);

// What the manifest records of one dataset's run.
dataset::ManifestEntry manifest_entry(const RunResult& run);

}  // namespace extshuffle::driver
