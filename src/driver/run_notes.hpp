// What a run says beside its output (RunResult::notes under -v, warnings
// unless -q): records no split takes, pieces of an older run, tar members
// skipped. The words only; the driver decides when each is said.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dataset/dataset_input.hpp"
#include "extshuffle/job.hpp"

namespace extshuffle::driver {

// What a tar dataset's reading skipped, for -v (nothing when it skipped nothing).
std::vector<std::string> tar_notes(const dataset::DatasetInput& dataset);

}  // namespace extshuffle::driver
