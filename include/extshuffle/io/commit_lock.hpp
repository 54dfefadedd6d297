// The commit's lock (docs/cli.md "The commit"): two runs into the same
// files commit one after the other, each its whole dataset, never
// interleaved. The lock is a write lock (fcntl's open file description
// lock) on a lock file beside the files that change, ".NAME.extshuffle-lock"
// for the output NAME (a pattern's name part, placeholders and all), opened
// for writing: only someone who may write there can hold it. A reader of
// the directory cannot (a flock on the directory, as earlier versions took,
// any reader could hold forever). The file is created 0600, widened to the
// classes that may write its directory (none in a sticky one, such as
// /tmp), given the directory's owner when root creates it, and removed by
// its holder when the commit ends (or a signal ends the run); one that
// kill -9 left is taken and removed by the next run.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace extshuffle::io {

// One lock of a commit: for the output `destination` (a file's name, or a
// pattern), whose files lie in `directory` ("" or ending in '/', as
// driver::CommitDestination spells its directories).
struct LockPlace {
  std::string directory;
  std::string destination;
};

// Told once, from another thread, when a lock has been waited for a second:
// what the run waits for and the lock file's path. Must not throw.
using WaitNotice = std::function<void(const std::string& message)>;

// The lock file's name for `destination`'s name part: ".NAME.extshuffle-lock",
// NAME cut short where the whole would not fit `directory`'s (a descriptor)
// name length.
std::string lock_file_name(int directory, const std::string& destination);

class CommitLock {
 public:
  // Takes the lock of every place (each directory opened through
  // io/destination_directory.hpp), in (device, inode, name) order so that
  // two runs never wait for each other, and waits for each; a wait longer
  // than a second is told to `notice` (may be empty). A file system that
  // takes no locks (ENOLCK, EOPNOTSUPP) is not locked: warnings() says so.
  // Throws IoError: the lock file cannot be created or opened for writing
  // (another user's, a link, no space), every destination untouched.
  CommitLock(const std::vector<LockPlace>& places, const WaitNotice& notice);
  // Removes each lock file, then lets go of its lock.
  ~CommitLock();
  CommitLock(const CommitLock&) = delete;
  CommitLock& operator=(const CommitLock&) = delete;
  // One line for each place whose file system takes no locks.
  const std::vector<std::string>& warnings() const { return warnings_; }

 private:
  struct Held {
    int directory = -1;
    int fd = -1;
    std::string name;
    bool locked = false;    // locked, or alone where the file system takes no locks
    int cleanup_slot = -1;  // io/cleanup_registry.hpp: a signal removes it too
  };
  void release() noexcept;
  std::vector<Held> held_;
  std::vector<std::string> warnings_;
};

}  // namespace extshuffle::io
