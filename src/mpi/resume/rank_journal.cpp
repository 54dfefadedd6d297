#include "rank_journal.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "extshuffle/driver/run_identity.hpp"
#include "extshuffle/errors.hpp"

namespace extshuffle::mpi {
namespace {

constexpr const char* kJournalName = "journal";

// The records of a rank's journal (their own numbers: a rank's journal is
// never read as extshuffle's).
enum RankRecord : std::uint32_t {
  kIdentity = 101,  // the Job's identity as the rank sees it, P among it
  kPieces = 102,    // rank 0: dataset, its hidden temporaries
  kPlaced = 103,    // dataset, --verify's digest of what the rank wrote
};

std::string pieces_payload(std::size_t dataset, const std::vector<JournalledPiece>& pieces) {
  io::FieldWriter out;
  out.u64(dataset);
  out.u64(pieces.size());
  for (const JournalledPiece& piece : pieces) {
    out.bytes(piece.path);
    out.bytes(piece.hidden_name);
    out.u64(piece.inode);
  }
  return out.text();
}

std::string placed_payload(std::size_t dataset, const std::string& written_state) {
  io::FieldWriter out;
  out.u64(dataset);
  out.bytes(written_state);
  return out.text();
}

// DIR itself: made 0700 when missing (by whichever rank of a machine comes
// first), then checked as extshuffle checks its DIR.
void make_job_directory(const std::string& directory) {
  if (::mkdir(directory.c_str(), 0700) != 0 && errno != EEXIST) {
    throw IoError("cannot create checkpoint directory", directory, errno);
  }
  (void)io::CheckpointDirectory::look(directory);
}

io::CheckpointDirectory open_rank_directory(const std::string& directory, int rank) {
  make_job_directory(directory);
  return io::CheckpointDirectory(rank_directory(directory, rank));
}

}  // namespace

std::string rank_directory(const std::string& directory, int rank) {
  return directory + "/rank-" + std::to_string(rank);
}

RankJournal::RankJournal(const std::string& directory, int rank)
    : directory_(open_rank_directory(directory, rank)) {
  journal_.emplace(directory_, kJournalName);
  for (const io::JournalRecord& record : journal_->read().records) {
    io::FieldReader in(record.payload);
    if (record.type == kIdentity) {
      identity_ = record.payload;
    } else if (record.type == kPieces) {
      const std::size_t dataset = in.u64();
      std::vector<JournalledPiece>& pieces = pieces_[dataset];
      pieces.resize(in.u64());
      for (JournalledPiece& piece : pieces) {
        piece.path = in.bytes();
        piece.hidden_name = in.bytes();
        piece.inode = in.u64();
      }
    } else if (record.type == kPlaced) {
      const std::size_t dataset = in.u64();
      placed_[dataset] = in.bytes();
    } else {
      throw Error("checkpoint journal '" + path() + "/" + kJournalName + "': a record of type " +
                  std::to_string(record.type) + " is not a rank's: not trusted");
    }
  }
}

void RankJournal::restart(const std::string& identity,
                          const std::map<std::size_t, std::vector<JournalledPiece>>& pieces,
                          const std::map<std::size_t, std::string>& placed) {
  std::vector<io::JournalRecord> records{{kIdentity, identity}};
  for (const auto& [dataset, files] : pieces) records.push_back({kPieces, pieces_payload(dataset, files)});
  for (const auto& [dataset, state] : placed) records.push_back({kPlaced, placed_payload(dataset, state)});
  journal_->rewrite(records);
  identity_ = identity;
  pieces_ = pieces;
  placed_ = placed;
}

void RankJournal::record_pieces(std::size_t dataset, const std::vector<JournalledPiece>& pieces) {
  journal_->append(kPieces, pieces_payload(dataset, pieces));
  pieces_[dataset] = pieces;
}

void RankJournal::record_placed(std::size_t dataset, const std::string& written_state) {
  journal_->append(kPlaced, placed_payload(dataset, written_state));
  placed_[dataset] = written_state;
}

void RankJournal::remove() {
  journal_.reset();
  directory_.remove_files({kJournalName});
  if (::rmdir(path().c_str()) != 0 && errno != ENOENT) {
    throw IoError("cannot remove checkpoint directory", path(), errno);
  }
}

std::optional<std::uint64_t> RankJournal::journalled_seed(const std::string& directory) {
  const io::CheckpointDirectory dir = io::CheckpointDirectory::look(rank_directory(directory, 0));
  if (!dir.exists()) return std::nullopt;
  for (const io::JournalRecord& record : io::read_journal(dir, kJournalName).records) {
    if (record.type != kIdentity) continue;
    const auto seed = driver::identity_value(record.payload, "--seed");
    if (seed) return std::stoull(*seed);
  }
  return std::nullopt;
}

}  // namespace extshuffle::mpi
