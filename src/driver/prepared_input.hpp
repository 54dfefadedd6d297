// One dataset of a Job, opened and counted before any output is written
// (docs/conventions.md, The Job and its commit): its inputs opened (standard input and compressed files
// spooled to scratch space), their format detected and their records
// counted, so that aligned datasets are compared before any work and each
// input's metadata is read once. Private to the driver: run_job.hpp is the
// public door.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "extshuffle/job.hpp"
#include "extshuffle/run_result.hpp"

namespace extshuffle::driver {

class JobCommit;
class RunCheckpoint;

// A dataset's part of --checkpoint DIR (run_checkpoint.hpp): none when `run`
// is null.
struct CheckpointSlot {
  RunCheckpoint* run = nullptr;
  std::size_t index = 0;
};

// Holds the input files and the run's scratch file (with the spool of a
// compressed input) until run_prepared() consumes it or it is destroyed.
// Move-only.
class PreparedInput {
 public:
  PreparedInput(PreparedInput&&) noexcept;
  PreparedInput& operator=(PreparedInput&&) noexcept;
  ~PreparedInput();
  std::uint64_t records() const;  // records to shuffle (header records of text not counted)
  const std::string& path() const;

  struct State;  // the library's own

 private:
  explicit PreparedInput(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
  friend PreparedInput prepare_input(const JobOptions& options, const JobDataset& dataset, CheckpointSlot checkpoint);
  friend RunResult run_prepared(const JobOptions& options, const JobDataset& dataset, PreparedInput input,
                                JobCommit& commit);
  friend RunResult run_dataset(const JobOptions& options, const JobDataset& dataset, JobCommit& commit,
                               CheckpointSlot checkpoint);
};

// Opens the dataset's inputs, detects their format and counts their records
// (one sequential read for text, none for fixed-size records). Throws the
// typed errors of extshuffle/errors.hpp: UsageError for options that do not
// fit the input or a budget too small (BudgetError), InputError, IoError.
// With a checkpoint, the scratch file is the checkpoint's and the run
// resumes from it.
PreparedInput prepare_input(const JobOptions& options, const JobDataset& dataset, CheckpointSlot checkpoint = {});

// Shuffles `input`, prepared with these options, into dataset.output; with
// options.run.dry_run, only describes what it would do. The output is untouched
// unless it succeeds: its finished files go to `commit`, which renames them
// into place with the Job's other outputs. Throws like prepare_input().
RunResult run_prepared(const JobOptions& options, const JobDataset& dataset, PreparedInput input, JobCommit& commit);

// One dataset from start to end: shuf's modes (-r, -n 0, -e, -i), or the
// output opened first (a bad destination fails before any work), then the
// input prepared and shuffled. Throws like prepare_input().
RunResult run_dataset(const JobOptions& options, const JobDataset& dataset, JobCommit& commit,
                      CheckpointSlot checkpoint = {});

}  // namespace extshuffle::driver
