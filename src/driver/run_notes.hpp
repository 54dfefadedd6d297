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

// Records that splits adding up to less than the whole leave out.
std::string left_out_warning(std::uint64_t left_out, std::uint64_t written);

// Files of the output pattern `pattern` that this run did not write; with
// `cleaned`, that it removed them.
std::string stale_warning(const std::string& pattern, bool cleaned, const std::vector<std::string>& stale);

// What a tar dataset's reading skipped, for -v (nothing when it skipped nothing).
std::vector<std::string> tar_notes(const dataset::DatasetInput& dataset);

}  // namespace extshuffle::driver
