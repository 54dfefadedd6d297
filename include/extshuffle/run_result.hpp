// What a run of a Job reports (docs/conventions.md, The Job and its commit): for each dataset, the
// measured facts (--stats), what was read and written (the manifest), and
// with --dry-run the plan and schedule it would follow. Pure data, shared by
// the driver and the rooms above it; the rooms below fill in their parts
// (RunStats, the file lists) but never see a RunResult whole
// (docs/conventions.md, Rooms).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace extshuffle {

// Measured facts of a run, printed by --stats as one RESULT line.
struct RunStats {
  std::uint64_t records = 0;
  std::uint64_t bytes = 0;
  std::uint32_t levels = 0;        // levels of the canonical plan
  std::uint32_t passes = 0;        // passes over the data through disk
  double seconds = 0;
  std::uint64_t bytes_read = 0;    // from the input and scratch space
  std::uint64_t bytes_written = 0; // to scratch space and the output
  std::uint64_t peak_rss_bytes = 0;
  // Of the process's memory, the most backed by transparent huge pages at
  // the end of a node run in RAM or of the whole walk, while its arena is
  // held (0: the kernel gave none).
  std::uint64_t huge_page_bytes = 0;
  // Where the time went (wall seconds on the driving thread).
  double seconds_reading = 0, seconds_shuffling = 0, seconds_scattering = 0, seconds_writing = 0;
};

// One input file of a dataset, as the manifest records it.
struct InputFileInfo {
  std::string path;
  std::uint64_t bytes = 0;    // as stored (compressed for a compressed file; read, for a stream)
  std::uint64_t records = 0;  // its records (header lines not counted)
};

// One output file, as the manifest records it.
struct OutputFileInfo {
  std::string path;   // its final name
  std::string split;  // its split's name; empty without --split
  std::uint64_t shard = 0, shards = 1;
  std::uint64_t records = 0;
  std::uint64_t bytes = 0;  // as stored (compressed for a compressed file)
  std::string xxh64;        // of the bytes as stored, seed 0, 16 hex digits
};

struct RunResult {
  RunStats stats;
  // What was read and written (empty with dry_run): the inputs in order,
  // the format they were read as ("lines", "csv", "tsv", "jsonl", "tfrecord",
  // "tar", "npy", "binary"), the records written and every output file in order.
  std::vector<InputFileInfo> inputs;
  std::string format;
  std::uint64_t records_written = 0;
  std::vector<OutputFileInfo> outputs;  // with options.dry_run only bytes_written (a spool of the input) is counted
  // With options.dry_run: the plan (levels, constants) and the walk's
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
