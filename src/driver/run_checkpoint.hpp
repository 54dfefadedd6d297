// A Job run with --checkpoint DIR (docs/cli.md "Resuming a run"): DIR opened
// and locked, its journal read, the Job's identity checked against the one
// recorded there (any difference: UsageError naming it, nothing removed) or
// recorded; each dataset's scratch file kept in DIR under a name; each
// dataset's walk reporting its points (DatasetCheckpoint), made durable in
// the background (checkpoint_syncer.hpp); and, once the Job is committed,
// DIR's files removed.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "checkpoint_records.hpp"
#include "checkpoint_syncer.hpp"
#include "dataset/sharded_output.hpp"
#include "extshuffle/dataset/record_digest.hpp"
#include "extshuffle/io/block_file.hpp"
#include "extshuffle/io/checkpoint_directory.hpp"
#include "extshuffle/io/checkpoint_journal.hpp"
#include "extshuffle/ioperm/walk_checkpoint.hpp"
#include "extshuffle/job.hpp"

namespace extshuffle::driver {

class RunCheckpoint;

// One dataset's part of the checkpoint: what its walk resumes from, and
// where its points go.
class DatasetCheckpoint final : public ioperm::WalkCheckpoint {
 public:
  DatasetCheckpoint(RunCheckpoint& run, std::size_t index, DatasetJournal journal);

  const ioperm::WalkResume& resume() const override { return journal_.resume; }
  bool scatter_point_due(std::uint64_t bytes, std::size_t streams) override;
  void scattered(const ioperm::WalkResume& point) override;
  void scatter_done(const io::SplitState& buckets) override;
  void emitted(const ioperm::WalkResume& point, std::function<void()> release) override;
  bool emit_point_due() override;
  void settle() override;

  // Before the inputs are counted: the counts an earlier run of the same
  // inputs kept, of the first inputs (all, some or none: count the others).
  // While counting, after each input but the last: the counts so far, made
  // durable in the background (a point of progress). After: the counts the
  // run took, kept by begin() when the journal has fewer.
  const std::vector<dataset::TextCount>& known_counts() const { return journal_.counts; }
  void counted_so_far(const std::vector<dataset::TextCount>& counts);
  // How far an earlier run got counting the input after the known ones
  // (null: it got nowhere inside one); while counting input `k`, how far
  // this run got (a point of progress, made durable in the background).
  const dataset::TextCountProgress* count_progress() const;
  void counting(std::size_t k, const dataset::TextCountProgress& progress);
  // The run counts on from count_progress(): -v's note says so.
  void count_on() { counted_on_from_ = count_progress() ? count_progress()->through : 0; }
  bool counted_on() const { return counted_on_from_ > 0; }
  void counted(std::vector<dataset::TextCount> counts);

  // Before the walk, once the records are counted: the dataset's plan,
  // checked against the journal's (UsageError naming the difference) or
  // recorded; the root's `bytes`, and what the threads' chunks hold at
  // once (about one chunk a thread), which space pass 1's points. Then
  // whether the dataset's output is whole already.
  void begin(const std::string& plan, std::uint64_t bytes, std::uint64_t chunk_bytes);
  bool done() const { return journal_.done; }
  // After the output's start(): the output and --verify's digest the
  // points carry, restored from the point the walk resumes from.
  void attach(dataset::ShardedOutput& output, dataset::RecordDigest& written);
  // After the output's finish(): the dataset's end, durable.
  void finish();
  // What a resume does (--dry-run, `now` false), or did (`now`, -v's note).
  std::string describe(std::uint64_t records, bool now) const;

 private:
  std::vector<std::pair<int, std::string>> output_files() const;
  RunCheckpoint& run_;
  std::size_t index_;
  DatasetJournal journal_;
  std::vector<dataset::TextCount> counted_;  // to journal: the journal had fewer
  std::size_t counts_offered_ = 0;           // inputs in the last record counted_so_far() offered
  std::uint64_t counted_on_from_ = 0;        // count_on(): the byte of the input counted on from
  std::uint64_t data_bytes_ = 0;             // the root's: pass 1's points about 1/64 of it apart
  std::uint64_t chunk_bytes_ = 0;            // at most this far apart (ioperm::scatter_point_spacing_bytes)
  dataset::ShardedOutput* output_ = nullptr;
  dataset::RecordDigest* written_ = nullptr;
};

class RunCheckpoint {
 public:
  // Opens DIR (created 0700 when missing; --dry-run: looked at only) and
  // checks or records the Job's identity. Throws UsageError when DIR holds
  // another run's checkpoint (naming the first difference) or an input
  // cannot be read again (standard input, a pipe), Error when another run
  // holds DIR or its journal is damaged, IoError.
  RunCheckpoint(const Job& job);
  ~RunCheckpoint();

  // Dataset k's scratch file, DIR's "scratch-K" (emptied when the dataset
  // has no point to resume from).
  std::unique_ptr<io::BlockFile> scratch(std::size_t k);
  DatasetCheckpoint& dataset(std::size_t k) { return *datasets_[k]; }
  const std::string& path() const { return directory_.path(); }
  // --dry-run: a line on DIR when it holds another run's checkpoint.
  const std::string& refusal() const { return refusal_; }
  // After the commit: DIR's files removed (DIR stays).
  void remove_files();

 private:
  friend class DatasetCheckpoint;
  void offer(CheckpointRecord type, const std::string& payload, std::vector<std::pair<int, std::string>> sync,
             std::vector<std::function<void()>> releases, bool droppable);

  io::CheckpointDirectory directory_;
  std::optional<io::CheckpointJournal> journal_;
  std::optional<CheckpointSyncer> syncer_;
  std::vector<std::unique_ptr<DatasetCheckpoint>> datasets_;
  std::vector<int> scratch_fds_;  // each dataset's, for its points' syncs (owned by its BlockFile)
  std::string refusal_;
};

}  // namespace extshuffle::driver
