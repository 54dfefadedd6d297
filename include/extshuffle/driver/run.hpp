// The library's entry point for one extshuffle run. It prints nothing: the
// caller prints the dry-run text and the RESULT fields it returns, and draws
// progress from Config::progress.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "extshuffle/driver/config.hpp"

namespace extshuffle::driver {

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
  // the format they were read as ("lines", "csv", "tsv", "jsonl", "npy",
  // "binary"), the records written and every output file in order.
  std::vector<InputFileInfo> inputs;
  std::string format;
  std::uint64_t records_written = 0;
  std::vector<OutputFileInfo> outputs;  // with config.dry_run only bytes_written (a spool of the input) is counted
  // With config.dry_run: the plan (levels, constants) and the executor's
  // schedule (passes, nodes, expected IO), three lines each ending in '\n'.
  std::string dry_run_text;
  // Said on stderr by the CLI: notes under -v (tar members skipped), warnings
  // unless -q (records a --split leaves out, stale pieces of an older run).
  std::vector<std::string> notes;
  std::vector<std::string> warnings;
  // Files matching the output pattern that this run did not write (removed with config.clean).
  std::vector<std::string> stale_pieces;
};

// An input opened, its format detected and its records counted: what run()
// needs to read it, so that callers that must know the record count first
// (aligned inputs) read each input's metadata once. Holds the input file and
// the run's scratch file (with the spool of a compressed input) until run()
// consumes it or it is destroyed. Move-only.
class PreparedInput {
 public:
  PreparedInput(PreparedInput&&) noexcept;
  PreparedInput& operator=(PreparedInput&&) noexcept;
  ~PreparedInput();
  std::uint64_t records() const;  // records to shuffle (header records of text not counted)
  const std::string& path() const;

  struct State;  // the library's own

 private:
  explicit PreparedInput(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
  friend PreparedInput prepare_input(const Config& config);
  friend RunResult run(const Config& config, PreparedInput input);
  friend RunResult run(const Config& config);
};

// Opens config.input_path (copying standard input or a compressed file to
// scratch space), detects its format and counts its records (one sequential
// read for text, none for fixed-size records). Throws the typed errors of
// extshuffle/errors.hpp: UsageError for options that do not fit the input
// or a budget too small (BudgetError), InputError, IoError.
PreparedInput prepare_input(const Config& config);

// Shuffles `input`, prepared with this `config` (bar output_path), into
// config.output_path; with config.dry_run, only describes what it would do.
// The output path is untouched unless it succeeds. Throws like
// prepare_input().
RunResult run(const Config& config, PreparedInput input);

// Shuffles config.input_path into config.output_path (or the generated items
// of -e/-i). The output is opened first, so that a bad destination fails
// before any work. Throws like prepare_input().
RunResult run(const Config& config);

}  // namespace extshuffle::driver
