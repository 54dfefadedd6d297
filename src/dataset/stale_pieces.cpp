#include "extshuffle/dataset/stale_pieces.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>

#include "extshuffle/dataset/output_parts.hpp"
#include "extshuffle/errors.hpp"
#include "extshuffle/io/destination_directory.hpp"

namespace extshuffle::dataset {
namespace {

const std::vector<std::string> kPlaceholders = {"{split}", "{shards}", "{shard}"};

// Matches `path` from `at` against the pattern's pieces from `piece`:
// literal text, or a placeholder. Digits for {shard}/{shards} (values kept
// to check their padding), a split name for {split}.
bool match_from(const std::vector<std::string>& pieces, std::size_t piece, const std::string& path, std::size_t at,
                const std::vector<std::string>& split_names, std::vector<std::string>& values) {
  if (piece == pieces.size()) return at == path.size();
  const std::string& p = pieces[piece];
  if (p == "{shard}" || p == "{shards}") {
    std::size_t end = at;
    while (end < path.size() && path[end] >= '0' && path[end] <= '9') ++end;
    // Every split of the digits: a literal digit may follow the placeholder.
    for (std::size_t stop = end; stop >= at + 5 && stop > at; --stop) {
      values.push_back(p + path.substr(at, stop - at));
      if (match_from(pieces, piece + 1, path, stop, split_names, values)) return true;
      values.pop_back();
    }
    return false;
  }
  if (p == "{split}") {
    for (const std::string& name : split_names) {
      if (path.compare(at, name.size(), name) != 0) continue;
      values.push_back(p + name);
      if (match_from(pieces, piece + 1, path, at + name.size(), split_names, values)) return true;
      values.pop_back();
    }
    return false;
  }
  return path.compare(at, p.size(), p) == 0 && match_from(pieces, piece + 1, path, at + p.size(), split_names, values);
}

std::vector<std::string> pattern_pieces(const std::string& pattern) {
  std::vector<std::string> pieces;
  std::string literal;
  for (std::size_t at = 0; at < pattern.size();) {
    bool placeholder = false;
    for (const std::string& p : kPlaceholders) {
      if (pattern.compare(at, p.size(), p) == 0) {
        if (!literal.empty()) pieces.push_back(literal);
        literal.clear();
        pieces.push_back(p);
        at += p.size();
        placeholder = true;
        break;
      }
    }
    if (!placeholder) literal += pattern[at++];
  }
  if (!literal.empty()) pieces.push_back(literal);
  return pieces;
}

// Whether the digits found are padded as output_file_name() pads them:
// every {shard} and {shards} alike, to max(5, digits of the shard count).
bool padded_alike(const std::vector<std::string>& values) {
  std::size_t width = 0;
  std::string shards;
  for (const std::string& v : values) {
    if (v.rfind("{split}", 0) == 0) continue;
    const std::string digits = v.substr(v.find('}') + 1);
    if (width != 0 && digits.size() != width) return false;
    width = digits.size();
    if (v.rfind("{shards}", 0) == 0) shards = digits;
  }
  if (width > 5) {
    // Wider than five only when the count needs it: no leading zero in {shards}.
    if (!shards.empty() && shards[0] == '0') return false;
  }
  return true;
}

std::string directory_of(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  if (slash == std::string::npos) return "";
  return path.substr(0, slash + 1);
}

bool is_input(const std::pair<dev_t, ino_t>& key, const std::vector<std::pair<dev_t, ino_t>>& inputs) {
  return key.second != 0 && std::find(inputs.begin(), inputs.end(), key) != inputs.end();
}

// Whether `st`, the file named `name` in `directory`, is a leftover this run
// may remove: the kind of file a run leaves (a regular file whose one name is
// this, or a second name of the file it stands for: a replaced file's
// backup), and owned by this run's user or by the owner of the file it
// stands for (a root run gives its files their destination's owner). Never
// another user's file that merely bears such a name (a sticky /tmp).
bool removable_leftover(int directory, const std::string& name, const struct stat& st) {
  struct stat destination {};
  const bool has_destination = ::fstatat(directory, leftover_of(name).c_str(), &destination, AT_SYMLINK_NOFOLLOW) == 0;
  const bool second_name = has_destination && destination.st_dev == st.st_dev && destination.st_ino == st.st_ino;
  const bool own_kind = S_ISREG(st.st_mode) && (st.st_nlink == 1 || second_name);
  const bool owned = st.st_uid == ::geteuid() || (has_destination && st.st_uid == destination.st_uid);
  return own_kind && owned;
}

constexpr const char* kTemporaryMark = ".extshuffle-";
// Earlier versions of extshuffle-mpi named their partial outputs so.
constexpr const char* kPartialMark = ".extshuffle-mpi-partial";

}  // namespace

bool matches_output_pattern(const std::string& pattern, const std::vector<std::string>& split_names,
                            const std::string& path) {
  const std::vector<std::string> pieces = pattern_pieces(pattern);
  std::vector<std::string> values;
  return match_from(pieces, 0, path, 0, split_names, values) && padded_alike(values);
}

std::vector<std::string> find_stale_pieces(const std::string& pattern, const std::vector<std::string>& split_names,
                                           const std::vector<std::string>& written) {
  const std::set<std::string> ours(written.begin(), written.end());
  std::set<std::string> directories;
  for (const std::string& path : written) directories.insert(directory_of(path));
  std::vector<std::string> stale;
  for (const std::string& directory : directories) {
    // Listed through the descriptor the run writes through (io/destination_directory.hpp).
    const std::string shown = directory.empty() ? "." : directory;
    const int fd = io::directory_descriptor(shown, pattern);
    for (const std::string& name : io::names_in(fd, shown)) {
      const std::string path = directory + name;
      if (name[0] == '.' || ours.count(path) || !matches_output_pattern(pattern, split_names, path)) continue;
      struct stat st;
      if (::fstatat(fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !(S_ISREG(st.st_mode) || S_ISLNK(st.st_mode))) {
        continue;
      }
      stale.push_back(path);
    }
  }
  std::sort(stale.begin(), stale.end());
  return stale;
}

void remove_stale_pieces(const std::vector<std::string>& paths, const std::vector<std::pair<dev_t, ino_t>>& inputs) {
  for (const std::string& path : paths) {
    const int directory = io::directory_descriptor(io::directory_part(path), path);
    const std::string name = io::name_part(path);
    if (is_input(io::file_key_in(directory, name), inputs)) {
      throw Error("internal error: stale piece '" + path + "' is an input of the run: not removed");
    }
    io::remove_in(directory, name, "cannot remove stale piece");
  }
}

std::string leftover_of(const std::string& name) {
  if (name.size() < 2 || name[0] != '.') return "";
  if (name.ends_with(kPartialMark) && name.size() > 1 + std::strlen(kPartialMark)) {
    return name.substr(1, name.size() - 1 - std::strlen(kPartialMark));
  }
  const std::size_t mark = name.rfind(kTemporaryMark);
  const std::size_t suffix = mark + std::strlen(kTemporaryMark);
  if (mark == std::string::npos || mark < 2 || name.size() != suffix + 16) return "";
  if (name.find_first_not_of("0123456789abcdef", suffix) != std::string::npos) return "";
  return name.substr(1, mark - 1);
}

std::vector<std::string> find_leftovers(const std::string& pattern, const std::vector<std::string>& split_names,
                                        const std::vector<std::string>& directories) {
  std::vector<std::string> found;
  for (const std::string& directory : std::set<std::string>(directories.begin(), directories.end())) {
    const std::string shown = directory.empty() ? "." : directory;
    const int fd = io::directory_descriptor(shown, pattern);
    for (const std::string& name : io::names_in(fd, shown)) {
      const std::string destination = leftover_of(name);
      if (destination.empty() || !matches_output_pattern(pattern, split_names, directory + destination)) continue;
      struct stat st;
      if (::fstatat(fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !removable_leftover(fd, name, st)) continue;
      found.push_back(directory + name);
    }
  }
  std::sort(found.begin(), found.end());
  return found;
}

std::vector<std::string> remove_leftovers(const std::vector<std::string>& paths,
                                          const std::vector<std::pair<dev_t, ino_t>>& inputs) {
  std::vector<std::string> removed;
  for (const std::string& path : paths) {
    const int directory = io::directory_descriptor(io::directory_part(path), path);
    const std::string name = io::name_part(path);
    const int fd = ::openat(directory, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) continue;
    // A running job's partial output or temporary is locked by its owner.
    const bool unused = ::flock(fd, LOCK_EX | LOCK_NB) == 0;
    struct stat st {};
    const bool ours = ::fstat(fd, &st) == 0 && !is_input({st.st_dev, st.st_ino}, inputs) &&
                      removable_leftover(directory, name, st) &&
                      io::file_key_in(directory, name) == std::pair<dev_t, ino_t>{st.st_dev, st.st_ino};
    if (unused && ours && ::unlinkat(directory, name.c_str(), 0) == 0) removed.push_back(path);
    ::close(fd);
  }
  return removed;
}

std::string stale_warning(const std::string& pattern, bool cleaned, const std::vector<std::string>& stale) {
  std::string names;
  for (std::size_t k = 0; k < stale.size() && k < 5; ++k) names += (k > 0 ? ", '" : "'") + stale[k] + "'";
  if (stale.size() > 5) names += " and " + std::to_string(stale.size() - 5) + " more";
  const std::string count = std::to_string(stale.size()) + (stale.size() == 1 ? " file" : " files");
  if (cleaned) return "removed " + count + " of -o '" + pattern + "' that this run did not write: " + names;
  return count + " of -o '" + pattern + "' not written by this run (an older run's?): " + names +
         " (--clean removes them)";
}

}  // namespace extshuffle::dataset
