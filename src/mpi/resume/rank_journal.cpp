#include "rank_journal.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "extshuffle/driver/run_identity.hpp"
#include "extshuffle/errors.hpp"

namespace extshuffle::mpi {
namespace {

constexpr const char* kJournalName = "journal";
constexpr std::uint64_t kRewriteJournalBytes = std::uint64_t{4} << 20;

// The records of a rank's journal (their own numbers: a rank's journal is
// never read as extshuffle's).
enum RankRecord : std::uint32_t {
  kIdentity = 101,        // the Job's identity as the rank sees it, P among it
  kPieces = 102,          // rank 0: dataset, its hidden temporaries
  kPlaced = 103,          // dataset, --verify's digest of what the rank wrote
  kExchanged = 104,       // dataset, the tags' width, the buckets received
  kBucketsWritten = 105,  // dataset, step 4's output written through a bucket
  kScattered = 106,       // dataset, a point of the scatter and exchange
};

std::string scratch_name(std::size_t dataset) { return "scratch-" + std::to_string(dataset); }

void write_exchange(io::FieldWriter& out, const JournalledExchange& exchange) {
  out.bytes(exchange.plan);
  out.u64(exchange.tag_width);
  out.u64(exchange.buckets.base);
  out.u64(exchange.buckets.overflow_top);
  out.u64(exchange.buckets.streams.size());
  for (const io::StoredStream& stream : exchange.buckets.streams) {
    out.u64(stream.bytes);
    out.u64(stream.crc32c);
    out.u64(stream.extents.size());
    for (const auto& [offset, bytes] : stream.extents) {
      out.u64(offset);
      out.u64(bytes);
    }
  }
}

std::string exchanged_payload(std::size_t dataset, const JournalledExchange& exchange) {
  io::FieldWriter out;
  out.u64(dataset);
  write_exchange(out, exchange);
  return out.text();
}

std::string scattered_payload(std::size_t dataset, const JournalledScatter& point) {
  io::FieldWriter out;
  out.u64(dataset);
  out.u64(point.round);
  out.u64(point.next_record);
  out.u64(point.data_offset);
  write_exchange(out, point.received);
  return out.text();
}

JournalledExchange read_exchange(io::FieldReader& in) {
  JournalledExchange exchange;
  exchange.plan = in.bytes();
  exchange.tag_width = static_cast<std::uint32_t>(in.u64());
  exchange.buckets.base = in.u64();
  exchange.buckets.overflow_top = in.u64();
  exchange.buckets.streams.resize(in.u64());
  for (io::StoredStream& stream : exchange.buckets.streams) {
    stream.bytes = in.u64();
    stream.crc32c = static_cast<std::uint32_t>(in.u64());
    stream.extents.resize(in.u64());
    for (auto& [offset, bytes] : stream.extents) {
      offset = in.u64();
      bytes = in.u64();
    }
  }
  return exchange;
}

JournalledScatter read_scattered(io::FieldReader& in) {
  JournalledScatter point;
  point.round = in.u64();
  point.next_record = in.u64();
  point.data_offset = in.u64();
  point.received = read_exchange(in);
  return point;
}

// A dataset's last three points of pass 1, `point` the newest.
void keep_last_three(std::vector<JournalledScatter>& points, JournalledScatter point) {
  if (points.size() == 3) points.erase(points.begin());
  points.push_back(std::move(point));
}

std::string buckets_payload(std::size_t dataset, const JournalledBuckets& point) {
  io::FieldWriter out;
  out.u64(dataset);
  out.u64(point.next_bucket);
  out.u64(point.record);
  out.u64(point.stream_byte);
  out.u64(point.head_bytes);
  out.u64(point.piece_bytes);
  out.bytes(point.written_state);
  return out.text();
}

JournalledBuckets read_buckets(io::FieldReader& in) {
  JournalledBuckets point;
  point.next_bucket = in.u64();
  point.record = in.u64();
  point.stream_byte = in.u64();
  point.head_bytes = in.u64();
  point.piece_bytes = in.u64();
  point.written_state = in.bytes();
  return point;
}

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

RankJournal::RankJournal(const std::string& directory, int rank) : directory_(open_rank_directory(directory, rank)) {
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
    } else if (record.type == kExchanged) {
      const std::size_t dataset = in.u64();
      exchanged_[dataset] = read_exchange(in);
    } else if (record.type == kScattered) {
      const std::size_t dataset = in.u64();
      keep_last_three(scattered_[dataset], read_scattered(in));
    } else if (record.type == kBucketsWritten) {
      const std::size_t dataset = in.u64();
      buckets_written_[dataset] = read_buckets(in);
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
                          const std::map<std::size_t, JournalledExchange>& exchanged,
                          const std::map<std::size_t, std::string>& placed,
                          const std::map<std::size_t, JournalledBuckets>& buckets_written,
                          std::map<std::size_t, std::vector<JournalledScatter>> scattered) {
  std::vector<io::JournalRecord> records{{kIdentity, identity}};
  for (const auto& [dataset, files] : pieces) records.push_back({kPieces, pieces_payload(dataset, files)});
  for (const auto& [dataset, points] : scattered) {
    for (const JournalledScatter& point : points) records.push_back({kScattered, scattered_payload(dataset, point)});
  }
  for (const auto& [dataset, exchange] : exchanged) {
    records.push_back({kExchanged, exchanged_payload(dataset, exchange)});
  }
  for (const auto& [dataset, point] : buckets_written) {
    records.push_back({kBucketsWritten, buckets_payload(dataset, point)});
  }
  for (const auto& [dataset, state] : placed) records.push_back({kPlaced, placed_payload(dataset, state)});
  journal_->rewrite(records);
  scattered_ = std::move(scattered);
  buckets_written_ = buckets_written;
  identity_ = identity;
  pieces_ = pieces;
  exchanged_ = exchanged;
  placed_ = placed;
}

std::unique_ptr<io::BlockFile> RankJournal::scratch(std::size_t dataset, bool keep) {
  const std::string name = scratch_name(dataset);
  const int fd = directory_.open_file(name, true);
  if (!keep && ::ftruncate(fd, 0) != 0) {
    const int error = errno;
    ::close(fd);
    throw IoError("cannot empty checkpoint file", path() + "/" + name, error);
  }
  scratch_fds_[dataset] = fd;
  return io::BlockFile::adopt_scratch(fd, path() + "/" + name);
}

void RankJournal::sync_scratch(std::size_t dataset) {
  if (::fdatasync(scratch_fds_.at(dataset)) != 0) {
    throw IoError("cannot write checkpoint file", path() + "/" + scratch_name(dataset), errno);
  }
}

void RankJournal::record_exchanged(std::size_t dataset, const JournalledExchange& exchange) {
  journal_->append(kExchanged, exchanged_payload(dataset, exchange));
  exchanged_[dataset] = exchange;
}

void RankJournal::record_scattered(std::size_t dataset, const JournalledScatter& point) {
  journal_->append(kScattered, scattered_payload(dataset, point));
  keep_last_three(scattered_[dataset], point);
  // A point a round or more: as record_buckets_written()'s.
  if (journal_->bytes() > kRewriteJournalBytes) {
    restart(identity_, pieces_, exchanged_, placed_, buckets_written_, scattered_);
  }
}

void RankJournal::record_buckets_written(std::size_t dataset, const JournalledBuckets& point) {
  journal_->append(kBucketsWritten, buckets_payload(dataset, point));
  buckets_written_[dataset] = point;
  // A point a group of buckets: a long job's journal is rewritten with the
  // records that still count once it outgrows a few MiB.
  if (journal_->bytes() > kRewriteJournalBytes) {
    restart(identity_, pieces_, exchanged_, placed_, buckets_written_, scattered_);
  }
}

void RankJournal::record_pieces(std::size_t dataset, const std::vector<JournalledPiece>& pieces) {
  journal_->append(kPieces, pieces_payload(dataset, pieces));
  pieces_[dataset] = pieces;
}

void RankJournal::record_placed(std::size_t dataset, const std::string& written_state) {
  journal_->append(kPlaced, placed_payload(dataset, written_state));
  placed_[dataset] = written_state;
}

void RankJournal::remove(std::size_t datasets) {
  journal_.reset();
  std::vector<std::string> names{kJournalName};
  for (std::size_t k = 0; k < datasets; ++k) names.push_back(scratch_name(k));
  directory_.remove_files(names);
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
