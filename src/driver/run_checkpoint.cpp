#include "run_checkpoint.hpp"

#include <unistd.h>

#include "extshuffle/driver/run_job.hpp"
#include "extshuffle/errors.hpp"
#include "extshuffle/driver/run_identity.hpp"

namespace extshuffle::driver {
namespace {

constexpr const char* kJournalName = "journal";

std::string scratch_name(std::size_t k) { return "scratch-" + std::to_string(k); }

// The slot of a record, which a rewritten journal keeps the last of.
std::string slot_of(const io::JournalRecord& record) {
  if (record.type == static_cast<std::uint32_t>(CheckpointRecord::kIdentity)) return "identity";
  io::FieldReader in(record.payload);
  return std::to_string(record.type) + " " + std::to_string(in.u64());
}

std::vector<std::pair<std::string, io::JournalRecord>> slots_of(const std::vector<io::JournalRecord>& records) {
  std::vector<std::pair<std::string, io::JournalRecord>> kept;
  for (const io::JournalRecord& record : records) {
    const std::string slot = slot_of(record);
    bool found = false;
    for (auto& [name, last] : kept) {
      if (name == slot) {
        last = record;
        found = true;
      }
    }
    if (!found) kept.emplace_back(slot, record);
  }
  return kept;
}

}  // namespace

RunCheckpoint::RunCheckpoint(const Job& job)
    : directory_(job.options.run.dry_run ? io::CheckpointDirectory::look(job.options.run.checkpoint_dir)
                                         : io::CheckpointDirectory(job.options.run.checkpoint_dir)) {
  const bool dry_run = job.options.run.dry_run;
  const std::string identity = job_identity(job);
  std::vector<io::JournalRecord> records;
  if (!dry_run) {
    journal_.emplace(directory_, kJournalName);
    records = journal_->read().records;
  } else if (directory_.exists()) {
    records = io::read_journal(directory_, kJournalName).records;
  }
  JournalState state = read_journal_state(records);
  if (!state.identity.empty()) {
    if (const auto difference = first_difference(identity, state.identity)) {
      const std::string line =
          "--checkpoint '" + path() + "': holds the checkpoint of another run (" + *difference + ")";
      if (!dry_run) {
        throw UsageError(line +
                         "; nothing was removed: rerun that command, or remove the directory's files to start "
                         "over");
      }
      refusal_ = "checkpoint: " + line + ": this run would be refused\n";
      state = {};
    }
  }
  for (std::size_t k = 0; k < job.datasets.size(); ++k) {
    datasets_.push_back(std::make_unique<DatasetCheckpoint>(
        *this, k, k < state.datasets.size() ? std::move(state.datasets[k]) : DatasetJournal{}));
  }
  scratch_fds_.assign(job.datasets.size(), -1);
  if (dry_run) return;
  syncer_.emplace(*journal_, slots_of(records));
  if (state.identity.empty()) {
    offer(CheckpointRecord::kIdentity, identity, {}, {}, false);
    syncer_->settle();
  }
}

RunCheckpoint::~RunCheckpoint() = default;

std::optional<std::uint64_t> checkpointed_seed(const std::string& directory) {
  const io::CheckpointDirectory dir = io::CheckpointDirectory::look(directory);
  if (!dir.exists()) return std::nullopt;
  const JournalState state = read_journal_state(io::read_journal(dir, kJournalName).records);
  const auto seed = identity_value(state.identity, "--seed");
  if (!seed) return std::nullopt;
  return std::stoull(*seed);
}

std::unique_ptr<io::BlockFile> RunCheckpoint::scratch(std::size_t k) {
  const std::string name = scratch_name(k);
  const int fd = directory_.open_file(name, true);
  // Nothing of an earlier run is trusted unless a point of the journal
  // says so: a dataset without one starts with an empty file.
  if (datasets_[k]->resume().phase == ioperm::WalkResume::Phase::kStart && !datasets_[k]->done() &&
      ::ftruncate(fd, 0) != 0) {
    const int error = errno;
    ::close(fd);
    throw IoError("cannot empty checkpoint file", path() + "/" + name, error);
  }
  scratch_fds_[k] = fd;
  return io::BlockFile::adopt_scratch(fd, path() + "/" + name);
}

void RunCheckpoint::remove_files() {
  syncer_->settle();
  syncer_.reset();
  journal_.reset();
  std::vector<std::string> names{kJournalName, std::string(kJournalName) + ".new"};
  for (std::size_t k = 0; k < datasets_.size(); ++k) names.push_back(scratch_name(k));
  directory_.remove_files(names);
}

void RunCheckpoint::offer(CheckpointRecord type, const std::string& payload,
                          std::vector<std::pair<int, std::string>> sync, std::vector<std::function<void()>> releases,
                          bool droppable) {
  CheckpointSyncer::Point point;
  point.record = {static_cast<std::uint32_t>(type), payload};
  point.slot = slot_of(point.record);
  point.sync = std::move(sync);
  point.releases = std::move(releases);
  point.droppable = droppable;
  syncer_->offer(std::move(point));
}

DatasetCheckpoint::DatasetCheckpoint(RunCheckpoint& run, std::size_t index, DatasetJournal journal)
    : run_(run), index_(index), journal_(std::move(journal)) {}

bool DatasetCheckpoint::scatter_point_due(std::uint64_t bytes, std::size_t streams) {
  // And the last one is durable (the walk does not wait for a sync).
  return bytes >= ioperm::scatter_point_spacing_bytes(data_bytes_, streams, chunk_bytes_) && run_.syncer_->idle();
}

// A point of pass 2 offered while the syncer is busy would wait, and be
// replaced by the next one (droppable) before it is made durable: skipped,
// it costs no flush of the output's buffers.
bool DatasetCheckpoint::emit_point_due() { return run_.syncer_->idle(); }

void DatasetCheckpoint::scattered(const ioperm::WalkResume& point) {
  run_.offer(CheckpointRecord::kScattered, scattered_record(index_, point),
             {{run_.scratch_fds_[index_], run_.path() + "/" + scratch_name(index_)}}, {}, true);
}

void DatasetCheckpoint::scatter_done(const io::SplitState& buckets) {
  run_.offer(CheckpointRecord::kScatterDone, scatter_done_record(index_, buckets),
             {{run_.scratch_fds_[index_], run_.path() + "/" + scratch_name(index_)}}, {}, false);
}

void DatasetCheckpoint::emitted(const ioperm::WalkResume& point, std::function<void()> release) {
  const std::string output = output_->checkpoint();
  run_.offer(CheckpointRecord::kEmitted, emitted_record(index_, point, output, written_->state()), output_files(),
             {std::move(release)}, true);
}

void DatasetCheckpoint::settle() { run_.syncer_->settle(); }

std::vector<std::pair<int, std::string>> DatasetCheckpoint::output_files() const {
  std::vector<std::pair<int, std::string>> files;
  for (const int fd : output_->descriptors()) files.emplace_back(fd, "output '" + output_->spec().pattern + "'");
  return files;
}

// A record holds every count so far: offered once 1/64 more inputs are
// counted (each one while there are fewer than 128), so that a dataset of N
// small files builds at most 64 records for each doubling of the count, not
// N records of up to N counts each; the syncer coalesces those it has not
// reached yet.
void DatasetCheckpoint::counted_so_far(const std::vector<dataset::TextCount>& counts) {
  const std::size_t since = std::max(counts_offered_, journal_.counts.size());
  if (counts.size() <= since || counts.size() - since < std::max<std::size_t>(1, counts.size() / 64)) return;
  run_.offer(CheckpointRecord::kCounts, counts_record(index_, counts), {}, {}, true);
  counts_offered_ = counts.size();
}

const dataset::TextCountProgress* DatasetCheckpoint::count_progress() const {
  const bool next = journal_.count_progress && journal_.counting_input == journal_.counts.size();
  return next && journal_.plan.empty() ? &*journal_.count_progress : nullptr;
}

void DatasetCheckpoint::counting(std::size_t k, const dataset::TextCountProgress& progress) {
  run_.offer(CheckpointRecord::kCountProgress, count_progress_record(index_, k, progress), {}, {}, true);
}

void DatasetCheckpoint::counted(std::vector<dataset::TextCount> counts) {
  if (counts.size() > journal_.counts.size()) counted_ = std::move(counts);
}

void DatasetCheckpoint::begin(const std::string& plan, std::uint64_t bytes, std::uint64_t chunk_bytes) {
  data_bytes_ = bytes;
  chunk_bytes_ = chunk_bytes;
  // The counts before the plan: a journal with a plan has the counts it
  // came from (a resume reads no input to count it).
  if (!counted_.empty()) {
    run_.offer(CheckpointRecord::kCounts, counts_record(index_, counted_), {}, {}, false);
    journal_.counts = std::move(counted_);
    counted_.clear();
  }
  if (journal_.plan.empty()) {
    run_.offer(CheckpointRecord::kPlan, plan_record(index_, plan), {}, {}, false);
    run_.syncer_->settle();
    journal_.plan = plan;
    return;
  }
  if (const auto difference = first_difference(plan, journal_.plan)) {
    throw UsageError("--checkpoint '" + run_.path() + "': holds the checkpoint of another run (" + *difference +
                     "); nothing was removed: rerun that command, or remove the directory's files to start over");
  }
}

void DatasetCheckpoint::attach(dataset::ShardedOutput& output, dataset::RecordDigest& written) {
  output_ = &output;
  written_ = &written;
  if (journal_.output_state.empty()) return;
  output.resume(journal_.output_state);
  written = dataset::RecordDigest::from_state(journal_.written_state);
}

void DatasetCheckpoint::finish() {
  const std::string output = output_->checkpoint();
  run_.offer(CheckpointRecord::kDone, done_record(index_, output, written_->state()), output_files(), {}, false);
  run_.syncer_->settle();
}

std::string DatasetCheckpoint::describe(std::uint64_t records, bool now) const {
  const std::string dir = "'" + run_.path() + "'";
  const std::string head = now ? "resumed from --checkpoint " + dir + ": " : "checkpoint: a resume from " + dir + " ";
  const std::string end = now ? "" : "\n";
  if (journal_.done) return head + (now ? "" : "finds ") + "the whole output there: only its commit was left" + end;
  const ioperm::WalkResume& r = journal_.resume;
  if (r.phase == ioperm::WalkResume::Phase::kBuckets) {
    return head + (now ? "went" : "goes") + " on with pass 2 after " + std::to_string(r.records_emitted) + " of " +
           std::to_string(records) + " records output (its first " + std::to_string(r.destinations_done) +
           " buckets or windows)" + end;
  }
  if (r.phase == ioperm::WalkResume::Phase::kScatter) {
    return head + (now ? "went" : "goes") + " on with pass 1 at record " + std::to_string(r.next_record) + " of " +
           std::to_string(records) + " (the records before it in the buckets kept there)" + end;
  }
  const dataset::TextCountProgress* counting = count_progress();
  if (counting || (now && counted_on_from_ > 0)) {
    return head + (now ? "counted" : "counts") + " input " + std::to_string(journal_.counting_input + 1) +
           " on from byte " + std::to_string(now ? counted_on_from_ : counting->through) +
           " (the counting pass, before the plan)" + end;
  }
  return "checkpoint: " + dir + " holds no point of this run yet: it starts from the beginning" + end;
}

}  // namespace extshuffle::driver
