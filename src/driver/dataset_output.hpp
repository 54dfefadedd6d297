// The output files of one dataset of a Job, as the options ask for them
// (dataset/sharded_output.hpp): its pattern, shards and splits, --verify's
// read-back, --index, --checkpoint's resumable temporaries.
#pragma once

#include <memory>

#include "dataset/sharded_output.hpp"
#include "extshuffle/job.hpp"

namespace extshuffle::driver {

// The dataset's output, its files not yet created (they are, as records
// arrive; the Job's commit renames them into place); null for a dry run,
// which writes nothing. Throws what ShardedOutput's constructor throws.
std::unique_ptr<dataset::ShardedOutput> open_output(const JobOptions& options, const JobDataset& dataset);

}  // namespace extshuffle::driver
