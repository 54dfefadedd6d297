#include "distributed_commit.hpp"

#include <utility>
#include <vector>

#include "extshuffle/dataset/stale_pieces.hpp"
#include "extshuffle/driver/job_manifest.hpp"
#include "extshuffle/errors.hpp"
#include "extshuffle/io/file_digest.hpp"
#include "extshuffle/mpi/rank_failure.hpp"

namespace extshuffle::mpi {

std::vector<std::string> DistributedCommit::Dataset::find_stale() const {
  if (!plan.several_files) return {};
  std::vector<std::string> written;
  for (const Piece& piece : plan.pieces) written.push_back(piece.path);
  return dataset::find_stale_pieces(output, split_names, written);
}

DistributedCommit::DistributedCommit(const JobOptions& options, const driver::JobFiles& plan, Communicator& comm)
    : options_(options), comm_(comm) {
  checkpoint(comm_, [&] {
    if (comm_.rank() != 0 || options.run.dry_run) return;
    commit_.emplace(dataset::CommitScope{plan.destinations, plan.read_files, options.output.clean, options.run.waiting},
                    driver::job_manifest(options));
  });
}

DistributedCommit::~DistributedCommit() = default;

void DistributedCommit::add(std::unique_ptr<SharedPieces> files, PiecePlan plan, RunResult result,
                            std::string pattern) {
  auto d = std::make_unique<Dataset>();
  d->files = std::move(files);
  d->plan = std::move(plan);
  d->result = std::move(result);
  d->output = std::move(pattern);
  for (const auto& part : options_.output.splits) d->split_names.push_back(part.name);
  for (const Piece& piece : d->plan.pieces) {
    d->pieces.push_back({piece.path, piece.split, piece.shard, piece.shards, piece.records, 0, ""});
  }
  if (commit_) commit_->add(*d);
  datasets_.push_back(std::move(d));
}

void DistributedCommit::digest_pieces() {
  std::size_t pieces = 0;
  for (const auto& d : datasets_) pieces += d->pieces.size();
  if (options_.run.manifest_path.empty()) return;
  // Piece k by rank k mod P: one rank reading every piece back would take as
  // long as writing the whole output on one machine. Read through the hidden
  // file's descriptor: the ranks wrote its bytes in parts, and xxh64
  // depends on their order.
  std::vector<std::uint64_t> mine(2 * pieces, 0);
  checkpoint(comm_, [&] {
    std::size_t k = 0;
    for (auto& d : datasets_) {
      for (std::size_t j = 0; j < d->pieces.size(); ++j, ++k) {
        if (static_cast<int>(k % static_cast<std::size_t>(comm_.size())) != comm_.rank()) continue;
        const io::FileDigest digest = io::read_back_digest(d->files->file(j).descriptor(), d->pieces[j].path);
        mine[2 * k] = digest.bytes;
        mine[2 * k + 1] = digest.xxh64;
      }
    }
  });
  const std::vector<std::uint64_t> all = comm_.all_gather(mine);
  std::size_t k = 0;
  for (auto& d : datasets_) {
    for (OutputFileInfo& info : d->pieces) {
      const std::size_t at = static_cast<std::size_t>(k % static_cast<std::size_t>(comm_.size())) * 2 * pieces + 2 * k;
      info.bytes = all[at];
      info.xxh64 = io::xxh64_hex(all[at + 1]);
      ++k;
    }
  }
}

void DistributedCommit::commit() {
  // Every rank's bytes on disk, then read back, before any file is prepared.
  checkpoint(comm_, [&] {
    for (auto& d : datasets_) d->files->sync();
  });
  digest_pieces();
  dataset::CommitReport report;
  checkpoint(comm_, [&] {
    if (comm_.rank() != 0) return;
    std::vector<dataset::ManifestEntry> entries;
    for (const auto& d : datasets_) entries.push_back(driver::manifest_entry(d->result));
    report = commit_->commit(std::move(entries));
  });
  for (std::size_t k = 0; k < report.stale_pieces.size(); ++k) {
    RunResult& result = datasets_[k]->result;
    result.stale_pieces = report.stale_pieces[k];
    if (!report.stale_lines[k].empty())
      (options_.output.clean ? result.notes : result.warnings).push_back(report.stale_lines[k]);
  }
  // Said even with -q, as extshuffle says them: about the files on disk.
  auto& said = datasets_.back()->result.output_warnings;
  said.insert(said.end(), report.warnings.begin(), report.warnings.end());
  for (auto& d : datasets_) d->files->forget();
}

}  // namespace extshuffle::mpi
