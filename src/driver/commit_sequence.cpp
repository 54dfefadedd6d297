// The one commit of both tools (driver/commit_sequence.hpp).
#include "extshuffle/driver/commit_sequence.hpp"

#include <string.h>

#include <set>
#include <spdlog/spdlog.h>

#include "extshuffle/dataset/stale_pieces.hpp"
#include "extshuffle/io/cleanup_registry.hpp"
#include "extshuffle/io/destination_directory.hpp"

namespace extshuffle::driver {

std::vector<std::string> directories_of(const std::vector<std::string>& paths) {
  std::set<std::string> directories;
  for (const std::string& path : paths) {
    const std::size_t slash = path.rfind('/');
    directories.insert(slash == std::string::npos ? "" : path.substr(0, slash + 1));
  }
  return {directories.begin(), directories.end()};
}

std::vector<std::string> find_leftovers(const std::vector<CommitDestination>& destinations) {
  std::set<std::string> found;
  for (const CommitDestination& d : destinations) {
    for (std::string& path : dataset::find_leftovers(d.pattern, d.split_names, d.directories)) {
      found.insert(std::move(path));
    }
  }
  return {found.begin(), found.end()};
}

int commit_in_order(const std::vector<CommitDestination>& destinations,
                    const std::vector<std::pair<dev_t, ino_t>>& inputs, const std::function<void()>& prepare,
                    const std::function<void()>& publish) {
  for (const CommitDestination& d : destinations) {
    for (const std::string& directory : d.directories) io::directory_descriptor(directory.empty() ? "." : directory, d.pattern);
  }
  const io::CommitLock lock;
  for (const std::string& path : dataset::remove_leftovers(find_leftovers(destinations), inputs)) {
    spdlog::debug("removed '{}', left by an interrupted run", path);
  }
  prepare();
  io::SignalHold hold;
  publish();
  return hold.release();
}

std::string late_signal_warning(int signal_number) {
  return std::string("signal SIG") + ::sigabbrev_np(signal_number) + " came while the output was being published: "
         "the commit completed, every file is in place";
}

}  // namespace extshuffle::driver
