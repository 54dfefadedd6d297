#include "extshuffle/io/destination_directory.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <map>
#include <mutex>

#include "extshuffle/errors.hpp"

namespace extshuffle::io {
namespace {

std::mutex g_directories_mutex;
std::map<std::string, std::pair<dev_t, ino_t>> g_by_name;
std::map<std::pair<dev_t, ino_t>, int> g_by_key;  // the descriptors

// Whether the directory open as `fd` still has a name: a removed one has
// no links left.
bool still_linked(int fd) {
  struct stat st {};
  return ::fstat(fd, &st) == 0 && st.st_nlink > 0;
}

std::string directory_name_key(std::string directory) {
  while (directory.size() > 1 && directory.back() == '/') directory.pop_back();
  return directory.empty() ? "." : directory;
}

}  // namespace

std::string directory_part(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string name_part(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

int directory_descriptor(const std::string& directory, const std::string& destination) {
  const std::string name = directory_name_key(directory);
  std::lock_guard lock(g_directories_mutex);
  if (const auto at = g_by_name.find(name); at != g_by_name.end()) return g_by_key.at(at->second);
  int opened = ::open(name.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  // A directory the run may write into but not list is still a directory.
  if (opened < 0 && errno == EACCES) opened = ::open(name.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (opened < 0) throw IoError("cannot write output", destination, errno);
  struct stat st {};
  if (::fstat(opened, &st) != 0) {
    const int error = errno;
    ::close(opened);
    throw IoError("cannot write output", destination, error);
  }
  const std::pair<dev_t, ino_t> key{st.st_dev, st.st_ino};
  auto [at, fresh] = g_by_key.emplace(key, opened);
  if (!fresh && still_linked(at->second)) {
    ::close(opened);  // the same directory under another name
  } else if (!fresh) {
    at->second = opened;  // a removed directory's inode number, reused
  }
  g_by_name.emplace(name, key);
  return at->second;
}

void forget_removed_directories() {
  std::lock_guard lock(g_directories_mutex);
  std::erase_if(g_by_name, [](const auto& entry) { return !still_linked(g_by_key.at(entry.second)); });
}

void rename_in(int directory, const std::string& from, const std::string& to, const std::string& destination) {
  if (::renameat(directory, from.c_str(), directory, to.c_str()) != 0) {
    throw IoError("cannot rename output into place", destination, errno);
  }
}

void remove_in(int directory, const std::string& name, const std::string& what) {
  if (::unlinkat(directory, name.c_str(), 0) != 0 && errno != ENOENT) throw IoError(what, name, errno);
}

std::pair<dev_t, ino_t> file_key_in(int directory, const std::string& name) {
  struct stat st {};
  if (::fstatat(directory, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return {0, 0};
  return {st.st_dev, st.st_ino};
}

std::vector<std::string> names_in(int directory, const std::string& shown_as) {
  const int fd = ::openat(directory, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR* dir = fd < 0 ? nullptr : ::fdopendir(fd);
  if (dir == nullptr) {
    const int error = errno;
    if (fd >= 0) ::close(fd);
    throw IoError("cannot list the output directory", shown_as, error);
  }
  std::vector<std::string> names;
  while (const dirent* entry = ::readdir(dir)) {
    const std::string name = entry->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  ::closedir(dir);
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace extshuffle::io
