// The commit of a Job (docs/cli.md "The commit"): every output of every
// aligned dataset (every shuf mode's too) and the manifest are committed as
// one. Each dataset's run finishes its files (complete, under temporary
// names) and hands them here; commit() then goes through the one commit of
// both tools (dataset/output_commit.hpp), each ShardedOutput a participant:
// under the lock of this Job's destinations, leftovers of interrupted runs
// removed, the pieces of older runs found, every temporary fsynced and
// named, and only then, signals held, the renames, the manifest last,
// undone if one fails.
#pragma once

#include <memory>
#include <vector>

#include "dataset/sharded_output.hpp"
#include "extshuffle/dataset/output_commit.hpp"
#include "extshuffle/driver/job_files.hpp"
#include "extshuffle/job.hpp"
#include "extshuffle/run_result.hpp"

namespace extshuffle::driver {

class JobCommit {
 public:
  // Opens the manifest's temporary (--manifest, not with --dry-run), so that
  // a bad path fails before any work. `files`: the Job's inputs, never
  // removed, and its destinations, the only ones locked.
  JobCommit(const JobOptions& options, const JobFiles& files);
  // A dataset's finished output, committed with the others, in the Job's
  // order of datasets.
  void add(std::unique_ptr<dataset::ShardedOutput> output);
  // Commits every output and the manifest (describing `result`); fills each
  // dataset's stale pieces (found under the lock) and its warnings, a
  // signal that came while publishing included.
  void commit(JobResult& result);

 private:
  bool clean_;
  dataset::OutputCommit commit_;
  std::vector<std::unique_ptr<dataset::ShardedOutput>> outputs_;
};

}  // namespace extshuffle::driver
