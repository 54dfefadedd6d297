// What a run of a Job reports (docs/conventions.md, The Job and its commit): for each dataset, the
// measured facts (--stats), what was read and written (the manifest), and
// with --dry-run the plan and schedule it would follow. Pure data, shared by
// the driver and the rooms above it; the rooms below fill in their parts
// (RunStats, modes/run_stats.hpp; the file lists, dataset/file_infos.hpp)
// but never see a RunResult whole: the Job ranks above them
// (docs/conventions.md, Rooms).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "extshuffle/dataset/file_infos.hpp"
#include "extshuffle/modes/run_stats.hpp"

namespace extshuffle {

struct RunResult {
  RunStats stats;
  // What was read and written (empty with dry_run): the inputs in order,
  // the format they were read as ("lines", "csv", "tsv", "jsonl", "tfrecord",
  // "tar", "npy", "binary"), the records written and every output file in order.
  std::vector<InputFileInfo> inputs;
  std::string format;
  std::uint64_t records_written = 0;
  std::vector<OutputFileInfo> outputs;  // with options.run.dry_run only bytes_written (a spool of the input) is counted
  // With options.run.dry_run: the plan (levels, constants) and the walk's
  // schedule (passes, nodes, expected IO), three lines each ending in '\n'.
  std::string dry_run_text;
  // Said on stderr by the CLI: notes under -v (tar members skipped), warnings
  // unless -q (records a --split leaves out, stale pieces of an older run).
  std::vector<std::string> notes;
  std::vector<std::string> warnings;
  // Warnings about the files on disk, said even with -q (a signal that came
  // while the output was being published: docs/cli.md "The commit").
  std::vector<std::string> output_warnings;
  // Files matching the output pattern that this run did not write (removed with --clean).
  std::vector<std::string> stale_pieces;
};

// One RunResult a dataset of the Job, in the Job's order.
struct JobResult {
  std::vector<RunResult> datasets;
};

}  // namespace extshuffle
