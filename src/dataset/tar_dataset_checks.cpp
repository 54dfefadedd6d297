#include "extshuffle/dataset/tar_dataset_checks.hpp"

#include "extshuffle/errors.hpp"

namespace extshuffle::dataset {

std::vector<std::string> tar_dataset_warnings(const std::vector<TarArchiveFacts>& archives, bool verify) {
  std::vector<std::string> warnings;
  std::uint64_t hard_links = 0, cut = 0;
  std::string first_cut;
  const TarArchiveFacts* before = nullptr;  // the last archive with samples
  for (const TarArchiveFacts& a : archives) {
    hard_links += a.hard_links;
    if (a.samples == 0) continue;
    if (before != nullptr && a.first_key == before->last_key) {
      const std::string what = "sample '" + a.first_key + "' is cut across '" + before->path + "' and '" + a.path + "'";
      if (verify) throw InputError("tar: " + what + ": --verify wants every sample whole in one archive");
      if (cut++ == 0) first_cut = what;
    }
    before = &a;
  }
  if (hard_links > 0) {
    warnings.push_back("tar: " + std::to_string(hard_links) +
                       " hard-link members skipped (their data is the member they link to, not theirs)");
  }
  if (cut > 0) {
    warnings.push_back("tar: " + std::to_string(cut) + " samples cut across two archives, each read as two (" +
                       first_cut + "; --verify refuses them)");
  }
  return warnings;
}

}  // namespace extshuffle::dataset
