// What a dataset of tar archives reads other than the archives hold, said
// rather than done quietly (docs/cli.md, "Tar archives"): hard-link members
// skipped (their data is another member's; webdataset skips them too), and
// samples cut across two archives (the last key of one is the first of the
// next: read as two half-samples, as webdataset reads them; with --verify,
// an error).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace extshuffle::dataset {

struct TarArchiveFacts {
  std::string path;
  std::uint64_t samples = 0;
  std::uint64_t hard_links = 0;
  std::string first_key, last_key;
};

// One warning line for each kind found in `archives` (in the dataset's
// order), with its count and an example. With `verify`, a cut sample throws
// InputError naming the key and both archives.
std::vector<std::string> tar_dataset_warnings(const std::vector<TarArchiveFacts>& archives, bool verify);

}  // namespace extshuffle::dataset
