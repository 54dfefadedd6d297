// --index-only (docs/cli.md "Record indexes"): the record index of each
// input file, written by the counting pass itself (dataset/input_index.hpp)
// into an output file that the Job's commit publishes with the others
// (driver/job_commit.hpp): beside its input, hidden (".NAME.extshuffle-index"),
// or where a dataset's -o says for its one file. No shuffle.
#pragma once

#include <vector>

#include "extshuffle/job.hpp"
#include "extshuffle/run_result.hpp"

namespace extshuffle::driver {

class JobCommit;

// Indexes every input file of `datasets` in order, one RunResult each
// (records, bytes read, the index written as its output), the index files
// handed to `commit`. Before any is read, every input is checked to be a
// plain file (check_indexable()). Throws UsageError, InputError (a bad
// record, an input that changed during the run), IoError.
std::vector<RunResult> run_index_only(const JobOptions& options, const std::vector<JobDataset>& datasets,
                                      JobCommit& commit);

}  // namespace extshuffle::driver
