#include "run_notes.hpp"

namespace extshuffle::driver {

std::string left_out_warning(std::uint64_t left_out, std::uint64_t written) {
  return "--split: " + std::to_string(left_out) + " of the " + std::to_string(written + left_out) +
         " records are in no split and are not written (a split of size 'rest' takes them)";
}

std::string stale_warning(const std::string& pattern, bool cleaned, const std::vector<std::string>& stale) {
  std::string names;
  for (std::size_t k = 0; k < stale.size() && k < 5; ++k) names += (k > 0 ? ", '" : "'") + stale[k] + "'";
  if (stale.size() > 5) names += " and " + std::to_string(stale.size() - 5) + " more";
  const std::string count = std::to_string(stale.size()) + (stale.size() == 1 ? " file" : " files");
  if (cleaned) return "removed " + count + " of -o '" + pattern + "' that this run did not write: " + names;
  return count + " of -o '" + pattern + "' not written by this run (an older run's?): " + names +
         " (--clean removes them)";
}

std::vector<std::string> tar_notes(const dataset::DatasetInput& dataset) {
  std::uint64_t skipped = 0;
  for (const auto& index : dataset.tar_indexes) skipped += index->skipped_members;
  if (skipped == 0) return {};
  return {"tar: " + std::to_string(skipped) + " members that are not regular files (directories, links, devices, "
          "FIFOs) skipped, as webdataset skips them"};
}

}  // namespace extshuffle::driver
