#include "extshuffle/dataset/stale_pieces.hpp"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <set>

#include "extshuffle/dataset/output_parts.hpp"
#include "extshuffle/errors.hpp"

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
    DIR* dir = ::opendir(directory.empty() ? "." : directory.c_str());
    if (dir == nullptr) throw IoError("cannot list the output directory", directory.empty() ? "." : directory, errno);
    while (const dirent* entry = ::readdir(dir)) {
      const std::string path = directory + entry->d_name;
      if (entry->d_name[0] == '.' || ours.count(path) || !matches_output_pattern(pattern, split_names, path)) continue;
      struct stat st;
      if (::lstat(path.c_str(), &st) != 0 || !(S_ISREG(st.st_mode) || S_ISLNK(st.st_mode))) continue;
      stale.push_back(path);
    }
    ::closedir(dir);
  }
  std::sort(stale.begin(), stale.end());
  return stale;
}

void remove_stale_pieces(const std::vector<std::string>& paths) {
  for (const std::string& path : paths) {
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) throw IoError("cannot remove stale piece", path, errno);
  }
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
