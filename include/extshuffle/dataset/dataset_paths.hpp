// The files of a dataset's operands (io::expand_input_paths), with a
// directory's files checked to be of one kind: a directory that holds data
// files (named for a format: .jsonl, .csv, .tar, .npy ..., compressed or
// not) and files of other kinds beside them (README.md, dataset_info.json)
// would make those records, or fail on their format: it is refused, listing
// them, and the data files are to be named instead.
#pragma once

#include <string>
#include <vector>

namespace extshuffle::dataset {

// Throws UsageError for a directory as above; what expand_input_paths throws.
std::vector<std::string> expand_dataset_paths(const std::vector<std::string>& operands);

}  // namespace extshuffle::dataset
