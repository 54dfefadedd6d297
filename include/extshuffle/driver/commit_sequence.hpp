// The one commit of both tools (docs/cli.md "The commit"): extshuffle's Job
// (every dataset and every shuf mode) and extshuffle-mpi's rank 0, once
// every rank's bytes are fsynced, publish through commit_in_order():
//   1. the commit lock of every destination directory (waited for: a second
//      run into the same files commits after the first, never between its
//      renames; io/destination_directory.hpp);
//   2. the leftovers of interrupted runs into the same destinations removed
//      (never an input, never one a running job holds);
//   3. prepare: everything that can fail for want of space or rights, every
//      destination untouched;
//   4. publish: the renames, the manifest last, with SIGINT, SIGTERM and
//      SIGHUP held (io/cleanup_registry.hpp): a publish that has begun
//      completes, and the signal is reported as late.
// A signal before step 4 ends the run (128 + n) with every old file as it was.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace extshuffle::driver {

// Files a commit writes under one name: a pattern with {split}, {shard},
// {shards}, or one file's name; `directories` are its expansions'
// directories, each "" or ending in '/'.
struct CommitDestination {
  std::string pattern;
  std::vector<std::string> split_names;
  std::vector<std::string> directories;
};

// The directories `paths` lie in, each "" or ending in '/', as
// CommitDestination holds them.
std::vector<std::string> directories_of(const std::vector<std::string>& paths);

// The leftovers of interrupted runs (dataset/stale_pieces.hpp) under
// `destinations`, sorted.
std::vector<std::string> find_leftovers(const std::vector<CommitDestination>& destinations);

// Steps 1-4 above; `inputs`: device and inode of every file the run reads,
// which nothing here removes. Returns the signal that came while publishing
// (0: none). Throws what prepare and publish throw.
int commit_in_order(const std::vector<CommitDestination>& destinations,
                    const std::vector<std::pair<dev_t, ino_t>>& inputs, const std::function<void()>& prepare,
                    const std::function<void()>& publish);

// The warning for a signal that came while publishing.
std::string late_signal_warning(int signal_number);

}  // namespace extshuffle::driver
