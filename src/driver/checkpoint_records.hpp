// The records of a run's checkpoint journal (docs/cli.md "Resuming a run";
// io/checkpoint_journal.hpp carries them) and what they say of each
// dataset: the Job's identity first, then per dataset its plan, the points
// of its walk (ioperm/walk_checkpoint.hpp) with its output's state, and its
// end; and its inputs' counts (text), which a resume takes rather than
// reading the inputs once more. A dataset resumes from the last of: its end, its last point of pass
// 2, its scatter done, its last point of pass 1.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "extshuffle/dataset/text_input.hpp"
#include "extshuffle/io/checkpoint_journal.hpp"
#include "extshuffle/ioperm/walk_checkpoint.hpp"

namespace extshuffle::driver {

enum class CheckpointRecord : std::uint32_t {
  kIdentity = 1,       // the Job's identity (run_identity.hpp)
  kPlan = 2,           // dataset, its plan
  kScattered = 3,      // dataset, a point of pass 1
  kScatterDone = 4,    // dataset, its buckets whole
  kEmitted = 5,        // dataset, a point of pass 2, the output's state, --verify's digest
  kDone = 6,           // dataset, its output whole, --verify's digest
  kCounts = 7,         // dataset, each input's counting pass (text: what the plan comes from)
  kCountProgress = 8,  // dataset, input k, how far its counting pass got (the input after those counted)
};

// What the journal says of one dataset.
struct DatasetJournal {
  std::string plan;           // empty: not planned yet
  // Each input's count, trusted as the identity matched (empty: none kept).
  std::vector<dataset::TextCount> counts;
  // How far the counting pass of input `counting_input` got (an input
  // after those of `counts`, or a stale record when it is not the next).
  std::optional<dataset::TextCountProgress> count_progress;
  std::size_t counting_input = 0;
  ioperm::WalkResume resume;  // where its walk resumes
  std::string output_state;   // the output at the point resumed from (empty: nothing output)
  std::string written_state;  // --verify's digest of what was output
  bool done = false;          // its output whole: only the commit is left
};

// The identity (empty when the journal holds none) and each dataset's part.
struct JournalState {
  std::string identity;
  std::vector<DatasetJournal> datasets;
};

// Reads the records. Throws Error when they are not records of a journal.
JournalState read_journal_state(const std::vector<io::JournalRecord>& records);

// The records' payloads.
std::string plan_record(std::size_t dataset, const std::string& plan);
std::string counts_record(std::size_t dataset, const std::vector<dataset::TextCount>& counts);
std::string count_progress_record(std::size_t dataset, std::size_t input, const dataset::TextCountProgress& progress);
std::string scattered_record(std::size_t dataset, const ioperm::WalkResume& point);
std::string scatter_done_record(std::size_t dataset, const io::SplitState& buckets);
std::string emitted_record(std::size_t dataset, const ioperm::WalkResume& point, const std::string& output_state,
                           const std::string& written_state);
std::string done_record(std::size_t dataset, const std::string& output_state, const std::string& written_state);

}  // namespace extshuffle::driver
