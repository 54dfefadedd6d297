// The directory of --checkpoint DIR (docs/cli.md "Resuming a run"): where a
// run that can be resumed keeps its scratch space under names and its
// journal. DIR and its files are the running user's alone: DIR is created
// 0700 (an existing one must be ours, a directory, not a symbolic link, and
// writable by no one else; it is then set to 0700), each file 0600, every
// file opened relative to DIR's descriptor without following links, and
// checked to be a regular file of ours. A run holds DIR's own lock for its
// whole life: a write lock (F_OFD_SETLK) on DIR/lock, which only a
// descriptor open for writing can take, so no reader of the file can hold
// it; a second run on the same DIR is refused, never interleaved.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace extshuffle::io {

class CheckpointDirectory {
 public:
  // Opens (or, when `create`, creates) `path` and takes its lock. Throws
  // Error when another run holds it, IoError for a directory that cannot be
  // made or opened, UsageError for one that is not ours (another owner, a
  // symbolic link, writable by others).
  CheckpointDirectory(const std::string& path, bool create = true);
  // Opens `path` to look only (--dry-run): no lock, nothing created;
  // exists() is false when it is missing.
  static CheckpointDirectory look(const std::string& path);
  ~CheckpointDirectory();
  CheckpointDirectory(CheckpointDirectory&& other) noexcept;
  CheckpointDirectory& operator=(CheckpointDirectory&&) = delete;
  CheckpointDirectory(const CheckpointDirectory&) = delete;

  bool exists() const { return fd_ >= 0; }
  const std::string& path() const { return path_; }
  int descriptor() const { return fd_; }

  // DIR's file `name` (no '/'), opened read-write; created 0600 when
  // missing and `create`, else -1 when missing. The caller owns the
  // descriptor. Throws IoError, and Error for a name that is not a regular
  // file of ours (a link, another owner).
  int open_file(const std::string& name, bool create) const;
  // The size of DIR's file `name`, 0 when missing.
  std::uint64_t file_bytes(const std::string& name) const;
  // Removes DIR's files `names` (missing ones are fine), then the lock
  // file, and syncs DIR. Throws IoError.
  void remove_files(const std::vector<std::string>& names);

 private:
  CheckpointDirectory() = default;
  std::string path_;
  int fd_ = -1;
  int lock_fd_ = -1;
};

}  // namespace extshuffle::io
