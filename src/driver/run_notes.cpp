#include "run_notes.hpp"

namespace extshuffle::driver {

std::vector<std::string> tar_notes(const dataset::DatasetInput& dataset) {
  std::uint64_t skipped = 0;
  for (const auto& index : dataset.tar_indexes) skipped += index->skipped_members;
  if (skipped == 0) return {};
  return {"tar: " + std::to_string(skipped) + " members that are not regular files (directories, links, devices, "
          "FIFOs) skipped, as webdataset skips them"};
}

}  // namespace extshuffle::driver
