// One dataset of a Job, opened and counted before any output is written
// (docs/conventions.md, The Job and its commit): its inputs opened (standard input and compressed files
// spooled to scratch space), their format detected and their records
// counted, so that aligned datasets are compared before any work and each
// input's metadata is read once; then shuffled into its output. Private to
// the driver: run_job.hpp is the public door (run_dataset.hpp runs a Job of
// one dataset, run_job.cpp aligned datasets).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "extshuffle/job.hpp"
#include "extshuffle/run_result.hpp"

namespace extshuffle::dataset {
class ShardedOutput;
}

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
  friend RunResult run_prepared(const JobOptions& options, PreparedInput input,
                                std::unique_ptr<dataset::ShardedOutput> output, JobCommit& commit);
};

// Opens the dataset's inputs, detects their format and counts their records
// (one sequential read for text, none for fixed-size records). Throws the
// typed errors of extshuffle/errors.hpp: UsageError for options that do not
// fit the input or a budget too small (BudgetError), InputError, IoError.
// With a checkpoint, the scratch file is the checkpoint's and the run
// resumes from it.
PreparedInput prepare_input(const JobOptions& options, const JobDataset& dataset, CheckpointSlot checkpoint = {});

// Shuffles `input`, prepared with these options, into `output` (the
// dataset's, dataset_output.hpp: opened by the caller, before the input when
// a bad destination must fail before any work; null for a dry run); with
// options.run.dry_run, only describes what it would do. The output is
// untouched unless it succeeds: its finished files go to `commit`, which
// renames them into place with the Job's other outputs. Throws like
// prepare_input().
RunResult run_prepared(const JobOptions& options, PreparedInput input, std::unique_ptr<dataset::ShardedOutput> output,
                       JobCommit& commit);

}  // namespace extshuffle::driver
