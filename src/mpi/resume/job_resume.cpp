#include "job_resume.hpp"

#include <sys/stat.h>

#include <algorithm>

#include "extshuffle/driver/run_identity.hpp"
#include "extshuffle/errors.hpp"
#include "extshuffle/mpi/rank_failure.hpp"

namespace extshuffle::mpi {
namespace {

std::string named(const std::string& directory) { return "--checkpoint '" + directory + "'"; }

// The job's identity as this rank sees it, P among it.
std::string rank_identity(const Job& job, int ranks) {
  return driver::job_identity(job) + "ranks\t" + std::to_string(ranks) + "\n";
}

// Refuses a rank's checkpoint of another job: another P first (the message
// says how to rerun it), then the first other difference. Nothing removed.
void check_same_job(const RankJournal& journal, const std::string& identity, const std::string& directory, int ranks) {
  const std::string& then = journal.identity();
  if (then.empty()) return;
  const auto ranks_then = driver::identity_value(then, "ranks");
  if (ranks_then && *ranks_then != std::to_string(ranks)) {
    throw UsageError(named(directory) + ": '" + journal.path() + "' holds the checkpoint of a job of " + *ranks_then +
                     " ranks, this job has " + std::to_string(ranks) + " (rerun it on " + *ranks_then +
                     " ranks, or remove its rank-* directories to start over)");
  }
  if (const auto difference = driver::first_difference(identity, then)) {
    throw UsageError(named(directory) + ": '" + journal.path() + "' holds the checkpoint of another job (" +
                     *difference + "): rerun that job, or remove its rank-* directories to start over");
  }
}

// Whether every temporary rank 0 journalled is still the file it created
// (another run's sweep of leftovers may have removed a killed job's).
bool temporaries_intact(const std::vector<JournalledPiece>& pieces) {
  for (const JournalledPiece& piece : pieces) {
    struct stat st {};
    if (::lstat(piece.path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) ||
        static_cast<std::uint64_t>(st.st_ino) != piece.inode) {
      return false;
    }
  }
  return true;
}

// Where each rank's step 4 resumed: "rank 0 from its first bucket, rank 1
// from bucket 7, ...".
std::string describe_buckets(const std::vector<std::uint64_t>& next_buckets) {
  std::string text;
  for (std::size_t rank = 0; rank < next_buckets.size(); ++rank) {
    text += (rank == 0 ? "" : ", ") + std::string("rank ") + std::to_string(rank) + " from " +
            (next_buckets[rank] == UINT64_MAX ? std::string("its first bucket")
                                              : "bucket " + std::to_string(next_buckets[rank]));
  }
  return text;
}

// Where each rank's scatter resumed: "rank 0 from record 4200, ...".
std::string describe_records(const std::vector<std::uint64_t>& next_records) {
  std::string text;
  for (std::size_t rank = 0; rank < next_records.size(); ++rank) {
    text += (rank == 0 ? "" : ", ") + std::string("rank ") + std::to_string(rank) + " from record " +
            std::to_string(next_records[rank]);
  }
  return text;
}

}  // namespace

JobResume::JobResume(const Job& job, Communicator& comm) : datasets_(job.datasets.size()) {
  const std::string& directory = job.options.run.checkpoint_dir;
  std::string identity;
  checkpoint(comm, [&] {
    journal_.emplace(directory, comm.rank());
    identity = rank_identity(job, comm.size());
    check_same_job(*journal_, identity, directory, comm.size());
  });
  // Each dataset from the minimum point over the ranks: placed everywhere
  // (rank 0's temporaries still there), exchanged everywhere, or the start.
  std::map<std::size_t, std::vector<JournalledPiece>> pieces;
  std::map<std::size_t, JournalledExchange> exchanged;
  std::map<std::size_t, std::string> placed;
  std::map<std::size_t, JournalledBuckets> buckets_written;
  std::map<std::size_t, std::vector<JournalledScatter>> scattered;
  for (std::size_t k = 0; k < datasets_; ++k) {
    const auto journalled = journal_->pieces().find(k);
    const bool intact = journalled != journal_->pieces().end() && temporaries_intact(journalled->second);
    if (intact) pieces[k] = journalled->second;
    std::uint64_t mine = 0;
    if (journal_->scattered().count(k) != 0) mine = 1;
    if (journal_->exchanged().count(k) != 0) mine = 2;
    // (A root not scattered by chunks has no exchange: placed, or the start.)
    if (journal_->placed().count(k) != 0 && (comm.rank() != 0 || intact)) mine = 3;
    agreed_[k] = static_cast<Point>(comm.min(mine));
    if (agreed_[k] == Point::kScattered) agree_on_round(k, comm, scattered);
    if (agreed_[k] >= Point::kExchanged && journal_->exchanged().count(k) != 0) {
      exchanged[k] = journal_->exchanged().at(k);
    }
    if (agreed_[k] == Point::kPlaced) placed[k] = journal_->placed().at(k);
    if (agreed_[k] == Point::kExchanged) {
      const auto point = journal_->buckets_written().find(k);
      const bool mine = point != journal_->buckets_written().end();
      if (mine) buckets_written[k] = point->second;
      resumed_buckets_[k] = comm.all_gather(mine ? point->second.next_bucket : UINT64_MAX);
    }
  }
  checkpoint(comm, [&] { journal_->restart(identity, pieces, exchanged, placed, buckets_written, scattered); });
}

// Inside the exchange: the last round after which every rank made a point
// (a rank is at most two points ahead of another, and keeps its last three),
// or the start when some rank holds no point of that round.
void JobResume::agree_on_round(std::size_t k, Communicator& comm,
                               std::map<std::size_t, std::vector<JournalledScatter>>& kept) {
  const auto held = journal_->scattered().find(k);
  const std::vector<JournalledScatter> points =
      held == journal_->scattered().end() ? std::vector<JournalledScatter>{} : held->second;
  const std::uint64_t round = comm.min(points.empty() ? UINT64_MAX : points.back().round);
  const auto found =
      std::find_if(points.begin(), points.end(), [&](const JournalledScatter& point) { return point.round == round; });
  if (comm.min(found == points.end() ? 0 : 1) == 0) {
    agreed_[k] = Point::kStart;
    return;
  }
  scattered_[k] = *found;
  kept[k] = {*found};
  resumed_records_[k] = comm.all_gather(found->next_record);
}

void JobResume::record_scattered(std::size_t dataset, const JournalledScatter& point) {
  journal_->sync_scratch(dataset);
  journal_->record_scattered(dataset, point);
}

const JournalledBuckets* JobResume::buckets_written(std::size_t dataset) const {
  if (point(dataset) != Point::kExchanged) return nullptr;
  const auto found = journal_->buckets_written().find(dataset);
  return found == journal_->buckets_written().end() ? nullptr : &found->second;
}

void JobResume::record_buckets_written(std::size_t dataset, const JournalledBuckets& point) {
  journal_->record_buckets_written(dataset, point);
}

const std::vector<JournalledPiece>* JobResume::pieces(std::size_t dataset) const {
  const auto found = journal_->pieces().find(dataset);
  return found == journal_->pieces().end() ? nullptr : &found->second;
}

void JobResume::record_pieces(std::size_t dataset, const std::vector<JournalledPiece>& pieces) {
  journal_->record_pieces(dataset, pieces);
}

void JobResume::record_placed(std::size_t dataset, const std::string& written_state) {
  journal_->record_placed(dataset, written_state);
}

void JobResume::record_exchanged(std::size_t dataset, const JournalledExchange& exchange) {
  journal_->sync_scratch(dataset);
  journal_->record_exchanged(dataset, exchange);
}

void JobResume::remove() { journal_->remove(datasets_); }

std::vector<std::string> JobResume::describe() const {
  std::vector<std::string> lines;
  for (std::size_t k = 0; k < datasets_; ++k) {
    const Point p = point(k);
    lines.push_back("checkpoint: dataset " + std::to_string(k + 1) + ": " +
                    (p == Point::kPlaced      ? "every rank had placed its range: only the commit was left"
                     : p == Point::kExchanged ? "every rank had its buckets whole: resumed after the exchange, " +
                                                    describe_buckets(resumed_buckets_.at(k))
                     : p == Point::kScattered
                         ? "every rank had made a point after round " + std::to_string(scattered_.at(k).round) +
                               " of the exchange: resumed there, " + describe_records(resumed_records_.at(k))
                         : "no point every rank made durable: run from the start"));
  }
  return lines;
}

}  // namespace extshuffle::mpi
