// The commit's renames as one (io/publication.hpp).
#include "extshuffle/io/publication.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>  // renameat2, RENAME_EXCHANGE
#include <cstring>

#include "extshuffle/errors.hpp"
#include "extshuffle/io/cleanup_registry.hpp"
#include "extshuffle/io/destination_directory.hpp"
#include "extshuffle/io/output_file.hpp"

namespace extshuffle::io {
namespace {

std::string quoted_list(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& name : names) text += (text.empty() ? "'" : ", '") + name + "'";
  return text;
}

}  // namespace

Publication::Publication(std::vector<PendingRename> renames) {
  for (PendingRename& rename : renames) entries_.push_back({std::move(rename), "", false, -1});
}

Publication::~Publication() {
  for (Entry& entry : entries_) {
    if (entry.backup.empty()) continue;
    // After the publish every backup is an old file's; before it, a second
    // name of the file still in place. A backup that is the only name left
    // of a replaced file (an undo that failed) stays.
    const PendingRename& r = entry.rename;
    if (published_ || file_key_in(r.directory, entry.backup) == file_key_in(r.directory, r.to)) {
      (void)::unlinkat(r.directory, entry.backup.c_str(), 0);
    }
    forget_backup(entry);
  }
}

void Publication::forget_backup(Entry& entry) {
  forget_cleanup_path(entry.cleanup_slot);
  entry.cleanup_slot = -1;
  entry.backup.clear();
}

void Publication::prepare() {
  install_cleanup_handlers();
  for (Entry& entry : entries_) {
    const PendingRename& r = entry.rename;
    struct stat st {};
    if (::fstatat(r.directory, r.to.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno != ENOENT) throw IoError("cannot write output", r.destination, errno);
      continue;  // a new file: its undo puts it back to its hidden name
    }
    entry.replaces = true;
    for (int attempt = 0; attempt < 100 && entry.backup.empty(); ++attempt) {
      const std::string name = temporary_name(r.directory, r.to);
      entry.cleanup_slot = register_cleanup_path(r.directory_path + name);
      if (::linkat(r.directory, r.to.c_str(), r.directory, name.c_str(), 0) == 0) {
        entry.backup = name;
        break;
      }
      const int error = errno;
      forget_cleanup_path(entry.cleanup_slot);
      entry.cleanup_slot = -1;
      // No hard links here: this file's rename cannot be undone.
      if (error == EPERM || error == EOPNOTSUPP || error == EMLINK) break;
      if (error != EEXIST) throw IoError("cannot write output", r.destination, error);
    }
  }
}

void Publication::publish() {
  std::size_t done = 0;
  try {
    for (; done < entries_.size(); ++done) {
      const PendingRename& r = entries_[done].rename;
      rename_in(r.directory, r.from, r.to, r.destination);
    }
    published_ = true;
  } catch (const std::exception& e) {
    const std::string in_place = undo(done);
    throw Error(std::string(e.what()) + " (" + in_place + ")");
  }
}

namespace {

// A new file that replaced none goes back to its hidden name: the run's
// failure then removes it, as any temporary, or a resumed run
// (--checkpoint) finds it where its journal says.
bool put_back(const PendingRename& r) {
  return ::renameat(r.directory, r.to.c_str(), r.directory, r.from.c_str()) == 0;
}

// The old file back over the new one, in one step (the destination never
// lacks a file), and the new one back to its hidden name. A file system
// without RENAME_EXCHANGE gets the old file back over the new, whose bytes
// are then gone (a resumed run redoes them).
bool put_back_over(const PendingRename& r, const std::string& backup) {
  if (::renameat2(r.directory, backup.c_str(), r.directory, r.to.c_str(), RENAME_EXCHANGE) == 0) {
    // Failing that, the new file goes: its backup name is no name of ours.
    if (::renameat(r.directory, backup.c_str(), r.directory, r.from.c_str()) != 0) {
      (void)::unlinkat(r.directory, backup.c_str(), 0);
    }
    return true;
  }
  return ::renameat(r.directory, backup.c_str(), r.directory, r.to.c_str()) == 0;
}

}  // namespace

std::string Publication::undo(std::size_t done) {
  if (done == 0) return "no file was renamed: every destination holds what it held before the run";
  std::vector<std::string> left_new, failures;
  for (std::size_t k = done; k-- > 0;) {
    Entry& entry = entries_[k];
    const PendingRename& r = entry.rename;
    if (entry.replaces && entry.backup.empty()) {
      left_new.push_back(r.destination);  // no backup: the old file is gone
      continue;
    }
    const bool undone = entry.replaces ? put_back_over(r, entry.backup) : put_back(r);
    if (undone) {
      if (entry.replaces) forget_backup(entry);
      continue;
    }
    failures.push_back("'" + r.destination + "': " + std::strerror(errno));
    left_new.push_back(r.destination);
  }
  if (left_new.empty()) {
    return "the " + std::to_string(done) + (done == 1 ? " file" : " files") +
           " renamed before it were put back: every destination holds what it held before the run";
  }
  std::string text;
  if (!failures.empty()) {
    text = "putting back failed for ";
    for (std::size_t k = 0; k < failures.size(); ++k) text += (k > 0 ? ", " : "") + failures[k];
    text += "; ";
  }
  return text + quoted_list(left_new) +
         " now hold this run's files, every other destination what it held before the run";
}

std::vector<std::string> Publication::remove_backups() {
  std::vector<std::string> warnings;
  for (Entry& entry : entries_) {
    if (entry.backup.empty()) continue;
    const PendingRename& r = entry.rename;
    if (::unlinkat(r.directory, entry.backup.c_str(), 0) != 0 && errno != ENOENT) {
      warnings.push_back("cannot remove '" + r.directory_path + entry.backup + "', the replaced file's second name: " +
                         std::strerror(errno) + " (the next run into '" + r.destination + "' removes it)");
    }
    forget_backup(entry);
  }
  return warnings;
}

}  // namespace extshuffle::io
