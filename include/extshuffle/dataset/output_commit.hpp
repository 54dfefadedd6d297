// The one commit of both tools (docs/cli.md "The commit"): extshuffle's Job
// (every dataset and every shuf mode) and extshuffle-mpi's rank 0, once
// every rank's bytes are fsynced, publish their outputs through one
// OutputCommit, whose participants (CommitParticipant: a dataset's
// ShardedOutput, extshuffle-mpi's shared pieces) each hold the finished
// files of one dataset. commit() goes through them in one order:
//   1. the commit lock of this Job's destinations, and of no other
//      (waited for, said after a second: a second run into the same files
//      commits after the first, never between its renames;
//      io/commit_lock.hpp);
//   2. the leftovers of interrupted runs into the same destinations removed
//      (never an input, never one a running job holds, never another
//      user's), and each participant's stale pieces found (stale_pieces.hpp);
//   3. prepare: everything that can fail for want of space or rights, every
//      destination untouched: each file fsynced, given its final mode and a
//      hidden name, the manifest written (its entries' sizes and xxh64 are
//      the participants': read before any rename, io/file_digest.hpp), each
//      file a rename replaces given a second name (io/publication.hpp);
//   4. publish: the renames, the manifest last, with every signal whose
//      default action ends the process held (io/cleanup_registry.hpp): a
//      publish that has begun completes, and the signal is reported as
//      late; a rename that fails undoes those done, and the message says
//      which files are in place; then --clean's removals and the second
//      names of the replaced files.
// A signal before step 4 ends the run (128 + n) with every old file as it was.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "extshuffle/dataset/file_infos.hpp"
#include "extshuffle/dataset/manifest.hpp"
#include "extshuffle/io/commit_lock.hpp"
#include "extshuffle/io/publication.hpp"

namespace extshuffle::dataset {

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

// The leftovers of interrupted runs (stale_pieces.hpp) under
// `destinations`, sorted.
std::vector<std::string> find_leftovers(const std::vector<CommitDestination>& destinations);

// One dataset's finished files in the commit: the steps it takes, called in
// this order, each once. Every file is complete before the commit begins
// (its size and xxh64 known, read back already with --verify).
class CommitParticipant {
 public:
  virtual ~CommitParticipant() = default;
  // The output as the user named it (a pattern or a file), for messages.
  virtual const std::string& pattern() const = 0;
  // Step 2, under the lock: the files of the pattern this participant does
  // not write (stale_pieces.hpp's find_stale_pieces), sorted; none for an
  // output of one file. Throws IoError.
  virtual std::vector<std::string> find_stale() const = 0;
  // The files as the manifest records them, in order, with their final
  // names, sizes and xxh64.
  virtual std::vector<OutputFileInfo> manifest_files() const = 0;
  // Step 3: every file on disk with its final mode and a hidden name beside
  // its destination; every destination untouched. Throws IoError.
  virtual void prepare() = 0;
  // After prepare(): the renames that publish the files, in order.
  virtual std::vector<io::PendingRename> pending_renames() const = 0;
  // Step 4, every rename of the commit done: the files are the
  // destinations' now (nothing of them is removed on a signal or failure).
  virtual void published() = 0;
};

// What the commit may touch and how: the Job's destinations, locked and
// swept (and no other), the files it reads (never removed), --clean, and
// who is told of a wait for the lock.
struct CommitScope {
  std::vector<CommitDestination> destinations;
  std::vector<std::pair<dev_t, ino_t>> inputs;
  bool clean = false;
  io::WaitNotice waiting;  // may be empty
};

// What the commit says: of each participant, in the order added, its stale
// pieces and the line that names them (a warning, or with --clean a note;
// empty when there are none); and the warnings about the files on disk (a
// file system without locks, a second name not removed, a signal that came
// while publishing).
struct CommitReport {
  std::vector<std::vector<std::string>> stale_pieces;
  std::vector<std::string> stale_lines;
  std::vector<std::string> warnings;
};

class OutputCommit {
 public:
  // With `manifest` (--manifest), opens its temporary, so that a bad path
  // fails before any work. Throws IoError.
  OutputCommit(CommitScope scope, const std::optional<ManifestOptions>& manifest);
  ~OutputCommit();
  OutputCommit(const OutputCommit&) = delete;
  OutputCommit& operator=(const OutputCommit&) = delete;

  // A participant, in the order of the manifest's datasets; it must
  // outlive commit().
  void add(CommitParticipant& participant);
  // Steps 1-4 above. `entries`: what the manifest says of each dataset, in
  // order (ignored without a manifest); the outputs and stale pieces of
  // entry k are filled from participant k. Throws what the steps throw,
  // and Error for a failed rename (every rename done undone, or the files
  // left new named).
  CommitReport commit(std::vector<ManifestEntry> entries);

 private:
  std::vector<io::PendingRename> prepare(std::vector<ManifestEntry> entries, CommitReport& report);
  void published(const CommitReport& report);
  CommitScope scope_;
  std::vector<CommitParticipant*> participants_;
  std::optional<ManifestWriter> manifest_;
};

// The warning for a signal that came while publishing.
std::string late_signal_warning(int signal_number);

}  // namespace extshuffle::dataset
