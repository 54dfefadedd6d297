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

CommitOutcome commit_in_order(const std::vector<CommitDestination>& destinations,
                              const std::vector<std::pair<dev_t, ino_t>>& inputs, const CommitSteps& steps,
                              const io::WaitNotice& waiting) {
  std::vector<io::LockPlace> places;
  for (const CommitDestination& d : destinations) {
    for (const std::string& directory : d.directories) {
      io::directory_descriptor(directory.empty() ? "." : directory, d.pattern);
      places.push_back({directory, d.pattern});
    }
  }
  CommitOutcome outcome;
  const io::CommitLock lock(places, waiting);
  outcome.warnings = lock.warnings();
  for (const std::string& path : dataset::remove_leftovers(find_leftovers(destinations), inputs)) {
    spdlog::debug("removed '{}', left by an interrupted run", path);
  }
  const CommitRenames prepared = steps.prepare();
  io::Publication publication(prepared.renames);
  publication.prepare();
  io::SignalHold hold;
  publication.publish(prepared.check, prepared.check_before);
  if (steps.published) steps.published();
  for (std::string& warning : publication.remove_backups()) outcome.warnings.push_back(std::move(warning));
  outcome.late_signal = hold.release();
  return outcome;
}

std::string late_signal_warning(int signal_number) {
  // A real-time signal has no abbreviation: its number.
  const char* name = ::sigabbrev_np(signal_number);
  return (name != nullptr ? std::string("signal SIG") + name : "signal " + std::to_string(signal_number)) +
         " came while the output was being published: the commit completed, every file is in place";
}

}  // namespace extshuffle::driver
