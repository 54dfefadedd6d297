// The library's entry point for one extshuffle run.
#pragma once

#include <cstdint>
#include <string>

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

// Shuffles config.input_path into config.output_path. Throws the typed
// errors of errors.hpp; the output path is untouched unless it succeeds.
RunStats run(const Config& config);

// The number of records config.input_path holds, as run() would read them
// (format detection included). A file, not standard input. Throws like run().
std::uint64_t input_records(const Config& config);

// The one-line RESULT record of --stats (key=value pairs).
std::string format_result_line(const RunStats& stats);

}  // namespace extshuffle::driver
