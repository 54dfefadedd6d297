// One dataset of a Job from start to end (run_job.cpp runs a Job of one
// dataset so): shuf's modes, or its output and input, in that order.
// Private to the driver: run_job.hpp is the public door.
#pragma once

#include "extshuffle/job.hpp"
#include "extshuffle/run_result.hpp"
#include "prepared_input.hpp"

namespace extshuffle::driver {

class JobCommit;

// Shuf's modes (-r, -n 0, -e, -i), or the output opened first (a bad
// destination fails before any work), then the input prepared and shuffled
// (prepared_input.hpp). The finished files go to `commit`. Throws like
// prepare_input().
RunResult run_dataset(const JobOptions& options, const JobDataset& dataset, JobCommit& commit,
                      CheckpointSlot checkpoint = {});

}  // namespace extshuffle::driver
