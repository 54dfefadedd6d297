// The one commit of both tools (docs/cli.md "The commit"): extshuffle's Job
// (every dataset and every shuf mode) and extshuffle-mpi's rank 0, once
// every rank's bytes are fsynced, publish through commit_in_order():
//   1. the commit lock of every destination (waited for, said after a
//      second: a second run into the same files commits after the first,
//      never between its renames; io/commit_lock.hpp);
//   2. the leftovers of interrupted runs into the same destinations removed
//      (never an input, never one a running job holds, never another
//      user's);
//   3. prepare: everything that can fail for want of space or rights, every
//      destination untouched: each file fsynced, given its final mode and a
//      hidden name, each file a rename replaces given a second name
//      (io/publication.hpp);
//   4. publish: the renames, the manifest last, with every signal whose
//      default action ends the process held (io/cleanup_registry.hpp): a
//      publish that has begun completes, and the signal is reported as
//      late; a rename that fails undoes those done, and the message says
//      which files are in place; then --clean's removals and the second
//      names of the replaced files.
// A signal before step 4 ends the run (128 + n) with every old file as it was.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "extshuffle/io/commit_lock.hpp"
#include "extshuffle/io/publication.hpp"

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

// What step 3 hands to step 4: the renames in order (the manifest's last),
// and `check` (may be empty: --verify's reading back of the outputs against
// the manifest), run just before rename `check_before` (renames.size():
// after the last), so that its failure undoes the renames too.
struct CommitRenames {
  std::vector<io::PendingRename> renames;
  std::function<void()> check;
  std::size_t check_before = 0;
};

// The caller's steps: `prepare` (step 3), and `published`, run in step 4
// once every rename is done (the files are the destinations' now; --clean).
struct CommitSteps {
  std::function<CommitRenames()> prepare;
  std::function<void()> published;
};

struct CommitOutcome {
  int late_signal = 0;                // a signal that came while publishing (0: none)
  std::vector<std::string> warnings;  // a file system without locks, a second name not removed
};

// Steps 1-4 above; `inputs`: device and inode of every file the run reads,
// which nothing here removes; `waiting`: told when the lock is waited for
// over a second (may be empty). Throws what the steps throw, and Error for
// a failed rename (every rename done undone, or the files left new named).
CommitOutcome commit_in_order(const std::vector<CommitDestination>& destinations,
                              const std::vector<std::pair<dev_t, ino_t>>& inputs, const CommitSteps& steps,
                              const io::WaitNotice& waiting);

// The warning for a signal that came while publishing.
std::string late_signal_warning(int signal_number);

}  // namespace extshuffle::driver
