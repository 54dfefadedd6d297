// The commit of a Job (DESIGN.md 2.6): every output of every aligned
// dataset and the manifest are committed as one. Each dataset's run
// finishes its files (complete, under temporary names) and hands them here;
// commit() then fsyncs and names every temporary (where a full disk or a
// missing right shows), and only then renames them into place, the manifest
// last. A failure before the first rename, a signal included, leaves every
// destination as it was; the renames themselves are the one window no
// ordering closes (docs/cli.md "The commit").
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "dataset/sharded_output.hpp"
#include "extshuffle/dataset/manifest.hpp"
#include "extshuffle/job.hpp"
#include "extshuffle/run_result.hpp"

namespace extshuffle::driver {

class JobCommit {
 public:
  // Opens the manifest's temporary (--manifest, not with --dry-run), so that
  // a bad path fails before any work.
  explicit JobCommit(const JobOptions& options);
  // A dataset's finished output, committed with the others.
  void add(std::unique_ptr<dataset::ShardedOutput> output);
  // Prepares every output and the manifest (describing `result`), then
  // renames them into place.
  void commit(const JobResult& result);

 private:
  std::vector<std::unique_ptr<dataset::ShardedOutput>> outputs_;
  std::optional<dataset::ManifestWriter> manifest_;
};

}  // namespace extshuffle::driver
