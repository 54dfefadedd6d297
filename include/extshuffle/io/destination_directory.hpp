// The directories a run writes into, by descriptor (docs/cli.md "The
// commit"): each is opened once, when the Job's plan is made, and every
// create, rename and unlink of the run happens relative to that descriptor
// (openat, linkat, renameat, unlinkat), so a directory swapped for another
// or for a symbolic link meanwhile redirects nothing. The commit's lock
// lies in them too (io/commit_lock.hpp).
#pragma once

#include <sys/types.h>

#include <string>
#include <utility>
#include <vector>

namespace extshuffle::io {

// The descriptor of `directory` (a path; "" is "."), opened on first use
// and kept for the life of the process; two names of one directory share
// one descriptor, kept even if the directory is moved or removed (a run's
// files never follow a name elsewhere). `destination` names the output in
// messages. Throws IoError.
int directory_descriptor(const std::string& directory, const std::string& destination);

// Drops the names whose directory was removed since it was opened, so that
// the next directory_descriptor() opens what the name holds now. Called as
// a Job starts: a program running several jobs may remove and recreate an
// output directory between them; within a run the descriptors stay.
void forget_removed_directories();

// The directory part of `path` ("." when it has none).
std::string directory_part(const std::string& path);
// The last component of `path`.
std::string name_part(const std::string& path);

// The commit's one rename: `from` over `to`, both in `directory`
// (renameat). Throws IoError naming `destination`.
void rename_in(int directory, const std::string& from, const std::string& to, const std::string& destination);

// Removes `name` in `directory` (unlinkat; gone already is fine). Throws
// IoError naming `what` and `name`.
void remove_in(int directory, const std::string& name, const std::string& what);

// Device and inode of `name` in `directory`, its link not followed;
// {0, 0} when it cannot be looked at.
std::pair<dev_t, ino_t> file_key_in(int directory, const std::string& name);

// The names in `directory`, "." and ".." left out. Throws IoError.
std::vector<std::string> names_in(int directory, const std::string& shown_as);

}  // namespace extshuffle::io
