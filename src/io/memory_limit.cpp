#include "extshuffle/io/memory_limit.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace extshuffle::io {
namespace {

// A limit file's value: digits, else none ("max", garbage, v1's huge "no limit").
std::optional<std::uint64_t> limit_value(const std::optional<std::string>& text) {
  if (!text) return std::nullopt;
  std::istringstream in(*text);
  std::string word;
  if (!(in >> word) || word.empty() || !std::all_of(word.begin(), word.end(), [](unsigned char c) {
        return std::isdigit(c) != 0;
      })) {
    return std::nullopt;
  }
  if (word.size() > 19) return std::nullopt;
  const std::uint64_t value = std::stoull(word);
  if (value == 0 || value >= (std::uint64_t{1} << 62)) return std::nullopt;
  return value;
}

// The lowest limit in `file` of `directory` and of each directory above it,
// up to and including `root`.
std::optional<std::uint64_t> lowest_limit(const std::string& root, const std::string& cgroup_path,
                                          const std::string& file, const FileReader& read_file) {
  std::optional<std::uint64_t> lowest;
  std::filesystem::path path(cgroup_path);
  for (;;) {
    const std::string relative = path.relative_path().string();
    const std::string where = relative.empty() ? root : root + "/" + relative;
    const auto value = limit_value(read_file(where + "/" + file));
    if (value && (!lowest || *value < *lowest)) lowest = value;
    if (relative.empty()) break;
    path = path.parent_path();
  }
  return lowest;
}

}  // namespace

std::optional<std::uint64_t> cgroup_memory_limit(const std::string& proc_self_cgroup, const std::string& cgroup_root,
                                                 const FileReader& read_file) {
  std::istringstream lines(proc_self_cgroup);
  std::string line;
  std::optional<std::uint64_t> lowest;
  auto take = [&](std::optional<std::uint64_t> value) {
    if (value && (!lowest || *value < *lowest)) lowest = value;
  };
  while (std::getline(lines, line)) {
    // hierarchy-ID:controller-list:cgroup-path
    const auto first = line.find(':');
    const auto second = first == std::string::npos ? std::string::npos : line.find(':', first + 1);
    if (second == std::string::npos) continue;
    const std::string controllers = line.substr(first + 1, second - first - 1);
    const std::string path = line.substr(second + 1);
    if (line.compare(0, first, "0") == 0 && controllers.empty()) {
      take(lowest_limit(cgroup_root, path, "memory.max", read_file));  // v2
      continue;
    }
    std::istringstream list(controllers);
    for (std::string controller; std::getline(list, controller, ',');) {
      if (controller == "memory") take(lowest_limit(cgroup_root + "/memory", path, "memory.limit_in_bytes", read_file));
    }
  }
  return lowest;
}

std::uint64_t physical_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page_size > 0 ? static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page_size)
                                    : std::uint64_t{1} << 30;
}

std::uint64_t usable_memory_bytes() {
  const FileReader read_file = [](const std::string& path) -> std::optional<std::string> {
    std::ifstream in(path);
    if (!in) return std::nullopt;
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
  };
  const std::uint64_t physical = physical_memory_bytes();
  const auto self = read_file("/proc/self/cgroup");
  const auto cgroup = self ? cgroup_memory_limit(*self, "/sys/fs/cgroup", read_file) : std::nullopt;
  return cgroup ? std::min(physical, *cgroup) : physical;
}

}  // namespace extshuffle::io
