// The one commit of both tools (dataset/output_commit.hpp).
#include "extshuffle/dataset/output_commit.hpp"

#include <string.h>

#include <set>
#include <spdlog/spdlog.h>

#include "extshuffle/dataset/stale_pieces.hpp"
#include "extshuffle/io/cleanup_registry.hpp"
#include "extshuffle/io/destination_directory.hpp"

namespace extshuffle::dataset {

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
    for (std::string& path : find_leftovers(d.pattern, d.split_names, d.directories)) found.insert(std::move(path));
  }
  return {found.begin(), found.end()};
}

OutputCommit::OutputCommit(CommitScope scope, const std::optional<ManifestOptions>& manifest)
    : scope_(std::move(scope)) {
  if (manifest) manifest_.emplace(*manifest);
}

OutputCommit::~OutputCommit() = default;

void OutputCommit::add(CommitParticipant& participant) { participants_.push_back(&participant); }

// Step 3: each participant's files, then the manifest, which describes
// them; the renames in that order, the manifest's last.
std::vector<io::PendingRename> OutputCommit::prepare(std::vector<ManifestEntry> entries, CommitReport& report) {
  std::vector<io::PendingRename> renames;
  for (CommitParticipant* participant : participants_) {
    participant->prepare();
    for (io::PendingRename& rename : participant->pending_renames()) renames.push_back(std::move(rename));
  }
  if (!manifest_) return renames;
  for (std::size_t k = 0; k < entries.size(); ++k) {
    if (k < participants_.size()) {
      entries[k].outputs = participants_[k]->manifest_files();
      entries[k].stale_pieces = report.stale_pieces[k];
    }
    manifest_->add(entries[k]);
  }
  manifest_->prepare();
  if (auto rename = manifest_->pending_rename()) renames.push_back(std::move(*rename));
  return renames;
}

void OutputCommit::published(const CommitReport& report) {
  for (CommitParticipant* participant : participants_) participant->published();
  if (manifest_) manifest_->published();
  if (!scope_.clean) return;
  for (const std::vector<std::string>& stale : report.stale_pieces) remove_stale_pieces(stale, scope_.inputs);
}

CommitReport OutputCommit::commit(std::vector<ManifestEntry> entries) {
  // 1. The lock of this Job's destinations: each directory opened when the
  // Job's files were planned (io/destination_directory.hpp).
  std::vector<io::LockPlace> places;
  for (const CommitDestination& d : scope_.destinations) {
    for (const std::string& directory : d.directories) {
      io::directory_descriptor(directory.empty() ? "." : directory, d.pattern);
      places.push_back({directory, d.pattern});
    }
  }
  CommitReport report;
  const io::CommitLock lock(places, scope_.waiting);
  report.warnings = lock.warnings();
  // 2. Leftovers of interrupted runs, and the pieces of older ones.
  for (const std::string& path : remove_leftovers(find_leftovers(scope_.destinations), scope_.inputs)) {
    spdlog::debug("removed '{}', left by an interrupted run", path);
  }
  for (const CommitParticipant* participant : participants_) {
    report.stale_pieces.push_back(participant->find_stale());
    const std::vector<std::string>& stale = report.stale_pieces.back();
    report.stale_lines.push_back(stale.empty() ? "" : stale_warning(participant->pattern(), scope_.clean, stale));
  }
  // 3. and 4.
  io::Publication publication(prepare(std::move(entries), report));
  publication.prepare();
  io::SignalHold hold;
  publication.publish();
  published(report);
  for (std::string& warning : publication.remove_backups()) report.warnings.push_back(std::move(warning));
  if (const int late = hold.release(); late != 0) report.warnings.push_back(late_signal_warning(late));
  return report;
}

std::string late_signal_warning(int signal_number) {
  // A real-time signal has no abbreviation: its number.
  const char* name = ::sigabbrev_np(signal_number);
  return (name != nullptr ? std::string("signal SIG") + name : "signal " + std::to_string(signal_number)) +
         " came while the output was being published: the commit completed, every file is in place";
}

}  // namespace extshuffle::dataset
