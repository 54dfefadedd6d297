#include "extshuffle/io/input_set.hpp"

#include <dirent.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>

#include "extshuffle/errors.hpp"

namespace extshuffle::io {
namespace {

bool is_directory(const std::string& path) {
  struct stat st {};
  return path != "-" && ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// The regular files directly in `directory`, in byte-wise name order.
std::vector<std::string> directory_files(const std::string& directory) {
  DIR* listing = ::opendir(directory.c_str());
  if (!listing) throw IoError("cannot list input directory", directory, errno);
  struct CloseDir {
    DIR* d;
    ~CloseDir() { ::closedir(d); }
  } close_dir{listing};
  const std::string prefix = directory.ends_with('/') ? directory : directory + "/";
  std::vector<std::string> names;
  errno = 0;
  while (const dirent* entry = ::readdir(listing)) {
    const std::string name = entry->d_name;
    struct stat st {};
    // Hidden names (., .., .DS_Store, editors' and our own temporaries) are not data.
    if (name.empty() || name[0] == '.') continue;
    if (::stat((prefix + name).c_str(), &st) == 0 && S_ISREG(st.st_mode)) names.push_back(name);
  }
  if (errno != 0) throw IoError("cannot list input directory", directory, errno);
  std::sort(names.begin(), names.end());  // std::string compares bytes as unsigned char
  if (names.empty()) {
    throw InputError("input directory '" + directory + "': holds no regular file (hidden files and " +
                     "subdirectories are not read)");
  }
  for (std::string& name : names) name = prefix + name;
  return names;
}

}  // namespace

std::vector<std::string> expand_input_paths(const std::vector<std::string>& operands) {
  std::vector<std::string> paths;
  for (const std::string& operand : operands) {
    if (!is_directory(operand)) {
      paths.push_back(operand);
      continue;
    }
    const auto files = directory_files(operand);
    paths.insert(paths.end(), files.begin(), files.end());
  }
  return paths;
}

void raise_open_file_limit() {
  struct rlimit limit {};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur >= limit.rlim_max) return;
  limit.rlim_cur = limit.rlim_max;
  (void)::setrlimit(RLIMIT_NOFILE, &limit);
}

InputSet::InputSet(const std::vector<std::string>& paths, const std::string& scratch_directory,
                   std::uint64_t memory_bytes) {
  if (std::count(paths.begin(), paths.end(), "-") > 1) {
    throw UsageError("standard input ('-') can be read only once: name it once among the inputs");
  }
  if (paths.size() > 1) raise_open_file_limit();
  // The first input makes the scratch file (after opening itself, so that a
  // missing input is reported as such before a bad scratch directory); the
  // others spool into it, each after the one before.
  for (const std::string& path : paths) {
    if (sources_.empty()) {
      sources_.push_back(std::make_unique<InputSource>(path, scratch_directory, memory_bytes));
      scratch_ = &sources_.back()->scratch();
    } else {
      sources_.push_back(std::make_unique<InputSource>(path, *scratch_, scratch_offset_, memory_bytes));
    }
    scratch_offset_ = sources_.back()->scratch_offset();
  }
}

InputSet::InputSet(const std::vector<std::string>& paths, std::unique_ptr<BlockFile> scratch,
                   std::uint64_t memory_bytes)
    : scratch_(scratch.get()), own_scratch_(std::move(scratch)) {
  if (std::count(paths.begin(), paths.end(), "-") > 1) {
    throw UsageError("standard input ('-') can be read only once: name it once among the inputs");
  }
  if (paths.size() > 1) raise_open_file_limit();
  for (const std::string& path : paths) {
    sources_.push_back(std::make_unique<InputSource>(path, *scratch_, scratch_offset_, memory_bytes));
    scratch_offset_ = sources_.back()->scratch_offset();
  }
}

std::uint64_t InputSet::spooled_bytes() const {
  std::uint64_t bytes = 0;
  for (const auto& source : sources_) bytes += source->spooled() ? source->bytes() : 0;
  return bytes;
}

void InputSet::check_unchanged() const {
  for (const auto& source : sources_) source->check_unchanged();
}

}  // namespace extshuffle::io
