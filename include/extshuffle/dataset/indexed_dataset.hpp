// A dataset's files opened for reading records by number
// (dataset/indexed_records.hpp), each with its record index checked to be
// its own, and the files checked to agree as the CLI's inputs of one dataset
// must (dataset/format_agreement.hpp): so the records are those the CLI
// counts for these files, or nothing is read. What Python's
// extshuffle.Dataset opens (docs/python.md "Reading records in the order").
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "extshuffle/dataset/dataset_options.hpp"
#include "extshuffle/dataset/indexed_records.hpp"

namespace extshuffle::dataset {

// Whether records of `path` read with `options` need an index's arrays:
// framed records do; fixed-size records and .npy rows do not (their places
// are arithmetic). Throws what check_indexable() and expected_reading() throw.
bool needs_index(const DatasetOptions& options, const std::string& path);

// Throws unless `index_path` is the index of `path` as it is now, read with
// `options` (InputError, IoError: one line), or `path` cannot be read at
// offsets (UsageError: check_indexable()). Cost: the index mapped and
// parsed, the input's fingerprint (ten blocks) read.
void check_index_of(const DatasetOptions& options, const std::string& path, const std::string& index_path);

// Opens `files` (a dataset's, in order: directories already expanded) with
// `index_paths[k]` the index of files[k] (ignored, and may be empty, where
// needs_index() is false). Each file's index is mapped and checked
// (check_index_of(); its fingerprint only with `check_fingerprints`: a
// data loader's worker reopening a dataset its parent checked skips those
// reads), and the files must agree on format, header, dtype and row shape,
// record size. Throws the one line of the first problem: UsageError,
// InputError, IoError.
std::unique_ptr<IndexedRecords> open_indexed_dataset(const std::vector<std::string>& files,
                                                     const std::vector<std::string>& index_paths,
                                                     const DatasetOptions& options, bool check_fingerprints);

}  // namespace extshuffle::dataset
