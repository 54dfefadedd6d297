// The commit's renames as one (docs/cli.md "The commit"), both tools': all
// or nothing, under failure too. prepare() gives every file a rename will
// replace a second name beside it (a hard link: its backup), so that every
// step that can fail for want of space or quota happens before the first
// rename; publish() renames in order, and a failure undoes the renames done
// (each replaced file's backup exchanged with the new file, a file that
// replaced none renamed back; the new files return to their hidden names,
// where the run's failure removes them or a resumed run finds them), so
// that every destination holds what it held before, and the message says
// so, or names the files a failed undo left new. Renaming a name over another in one directory adds no entry, so the
// undo needs no space. Hard links refused by the file system (EPERM,
// EOPNOTSUPP, EMLINK) leave that file without a backup: its rename cannot
// be undone, which a failure's message then says.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace extshuffle::io {

// One rename of a commit: the complete file named `from` over `to`, both in
// the directory open as `directory` (io/destination_directory.hpp), whose
// path is `directory_path` ("" or ending in '/'); `destination` names the
// output in messages.
struct PendingRename {
  int directory = -1;
  std::string directory_path;
  std::string from;
  std::string to;
  std::string destination;
};

class Publication {
 public:
  explicit Publication(std::vector<PendingRename> renames);
  // Removes the backups left: all once published (a later step failed),
  // else those of files still in place; never the only name of a replaced
  // file whose undo failed.
  ~Publication();
  Publication(const Publication&) = delete;
  Publication& operator=(const Publication&) = delete;

  // The backups (linkat), each registered for removal on a signal
  // (io/cleanup_registry.hpp). Throws IoError naming the destination
  // (ENOSPC, EDQUOT...), every destination untouched.
  void prepare();
  // The renames, in order. A failure undoes every rename done and throws
  // Error: the failure's message, then which files are in place.
  void publish();
  // After publish(): the replaced files' backups removed. Returns a warning
  // for each that could not be (the next run into them removes it).
  std::vector<std::string> remove_backups();

 private:
  struct Entry {
    PendingRename rename;
    std::string backup;     // the replaced file's second name, while it has it
    bool replaces = false;  // `to` existed at prepare()
    int cleanup_slot = -1;
  };
  // Undoes renames [0, done); returns what is in place afterwards.
  std::string undo(std::size_t done);
  void forget_backup(Entry& entry);
  std::vector<Entry> entries_;
  bool published_ = false;  // every rename done
};

}  // namespace extshuffle::io
