#include "distributed_commit.hpp"

#include <utility>
#include <vector>

#include "extshuffle/dataset/stale_pieces.hpp"
#include "extshuffle/driver/commit_sequence.hpp"
#include "extshuffle/driver/job_slices.hpp"
#include "extshuffle/errors.hpp"
#include "extshuffle/mpi/rank_failure.hpp"

// Inlined, as in the library: the digest of each finished piece.
#define XXH_INLINE_ALL
#include <xxhash.h>

namespace extshuffle::mpi {
namespace {

// The size and xxh64 (seed 0) of a finished piece, read back from its
// hidden file: the ranks wrote its bytes in parts, and xxh64 depends on
// their order.
std::pair<std::uint64_t, std::uint64_t> digest_piece(SharedOutput& file, const std::string& path) {
  XXH64_state_t state;
  XXH64_reset(&state, 0);
  std::vector<char> buffer(std::size_t{1} << 20);
  std::uint64_t bytes = 0;
  for (;;) {
    const ssize_t got = ::pread(file.descriptor(), buffer.data(), buffer.size(), static_cast<off_t>(bytes));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) throw IoError("cannot read back output", path, errno);
    if (got == 0) break;
    XXH64_update(&state, buffer.data(), static_cast<std::size_t>(got));
    bytes += static_cast<std::uint64_t>(got);
  }
  return {bytes, XXH64_digest(&state)};
}

}  // namespace

DistributedCommit::DistributedCommit(const JobOptions& options, const driver::JobFiles& plan, Communicator& comm)
    : options_(options), plan_(plan), comm_(comm) {
  checkpoint(comm_, [&] {
    if (comm_.rank() == 0 && !options.manifest_path.empty() && !options.dry_run)
      manifest_.emplace(driver::manifest_options(options));
  });
}

DistributedCommit::~DistributedCommit() = default;

void DistributedCommit::add(std::unique_ptr<SharedPieces> files, PiecePlan plan, RunResult result,
                            std::string pattern) {
  datasets_.push_back({std::move(files), std::move(plan), std::move(result), std::move(pattern)});
}

std::vector<std::uint64_t> DistributedCommit::digest_pieces() {
  std::size_t pieces = 0;
  for (const Dataset& d : datasets_) pieces += d.plan.pieces.size();
  std::vector<std::uint64_t> mine(2 * pieces, 0);
  if (options_.manifest_path.empty()) return mine;
  // Piece k by rank k mod P: one rank reading every piece back would take as
  // long as writing the whole output on one machine.
  checkpoint(comm_, [&] {
    std::size_t k = 0;
    for (Dataset& d : datasets_) {
      for (std::size_t j = 0; j < d.plan.pieces.size(); ++j, ++k) {
        if (static_cast<int>(k % static_cast<std::size_t>(comm_.size())) != comm_.rank()) continue;
        const auto [bytes, hash] = digest_piece(d.files->file(j), d.plan.pieces[j].path);
        mine[2 * k] = bytes;
        mine[2 * k + 1] = hash;
      }
    }
  });
  const std::vector<std::uint64_t> all = comm_.all_gather(mine);
  std::vector<std::uint64_t> digests(2 * pieces, 0);
  for (std::size_t k = 0; k < pieces; ++k) {
    const std::size_t owner = k % static_cast<std::size_t>(comm_.size());
    digests[2 * k] = all[owner * 2 * pieces + 2 * k];
    digests[2 * k + 1] = all[owner * 2 * pieces + 2 * k + 1];
  }
  return digests;
}

void DistributedCommit::prepare(Dataset& d, std::size_t first_piece, const std::vector<std::uint64_t>& digests) {
  for (std::size_t k = 0; k < d.plan.pieces.size(); ++k) {
    const Piece& piece = d.plan.pieces[k];
    OutputFileInfo info{piece.path, piece.split, piece.shard, piece.shards, piece.records, 0, ""};
    if (manifest_) {
      const std::size_t at = 2 * (first_piece + k);
      info.bytes = digests[at];
      char hex[17];
      std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(digests[at + 1]));
      info.xxh64 = hex;
    }
    d.result.outputs.push_back(info);
  }
  if (d.plan.several_files) {
    std::vector<std::string> names, written;
    for (const auto& part : options_.splits) names.push_back(part.name);
    for (const Piece& piece : d.plan.pieces) written.push_back(piece.path);
    d.result.stale_pieces = dataset::find_stale_pieces(d.pattern, names, written);
  }
  d.files->prepare_commit();
}

// Rank 0, every rename done, signals held: the files are the
// destinations' now; --clean's removals.
void DistributedCommit::published() {
  for (Dataset& d : datasets_) d.files->published();
  if (manifest_) manifest_->published();
  if (options_.clean) {
    for (const Dataset& d : datasets_) dataset::remove_stale_pieces(d.result.stale_pieces, plan_.read_files);
  }
}

// Rank 0: every file and the manifest prepared; the renames, the manifest's
// last, checked against the pieces in place just before it.
driver::CommitRenames DistributedCommit::prepare_all(const std::vector<std::uint64_t>& digests) {
  driver::CommitRenames prepared;
  std::size_t first_piece = 0;
  for (Dataset& d : datasets_) {
    prepare(d, first_piece, digests);
    first_piece += d.plan.pieces.size();
    for (io::PendingRename& rename : d.files->pending_renames()) prepared.renames.push_back(std::move(rename));
  }
  prepared.check_before = prepared.renames.size();
  if (manifest_) {
    for (const Dataset& d : datasets_) manifest_->add(driver::manifest_entry(d.result));
    manifest_->prepare();
    if (auto rename = manifest_->pending_rename()) prepared.renames.push_back(std::move(*rename));
    prepared.check = [this] { manifest_->check_outputs(); };
  }
  return prepared;
}

void DistributedCommit::commit() {
  // Every rank's bytes on disk, before any file is prepared.
  checkpoint(comm_, [&] {
    for (Dataset& d : datasets_) d.files->sync();
  });
  const std::vector<std::uint64_t> digests = digest_pieces();
  driver::CommitOutcome outcome;
  checkpoint(comm_, [&] {
    if (comm_.rank() != 0) return;
    driver::CommitSteps steps;
    steps.prepare = [&] { return prepare_all(digests); };
    steps.published = [&] { published(); };
    outcome = driver::commit_in_order(plan_.destinations, plan_.read_files, steps, options_.waiting);
  });
  for (Dataset& d : datasets_) {
    if (comm_.rank() != 0 || d.result.stale_pieces.empty()) continue;
    const std::string line = dataset::stale_warning(d.pattern, options_.clean, d.result.stale_pieces);
    (options_.clean ? d.result.notes : d.result.warnings).push_back(line);
  }
  // Said even with -q, as extshuffle says them: about the files on disk.
  auto& said = datasets_.back().result.output_warnings;
  said.insert(said.end(), outcome.warnings.begin(), outcome.warnings.end());
  if (outcome.late_signal != 0) said.push_back(driver::late_signal_warning(outcome.late_signal));
  for (Dataset& d : datasets_) d.files->forget();
}

}  // namespace extshuffle::mpi
