// The measured facts of a run (--stats' RESULT line, cli/result_fields.hpp),
// filled in by whichever room ran it: shuf's modes, the driver's shuffle,
// the distributed run. Here, in the lowest room that fills one in.
#pragma once

#include <cstdint>

namespace extshuffle {

// Measured facts of a run, printed by --stats as one RESULT line.
struct RunStats {
  std::uint64_t records = 0;
  std::uint64_t bytes = 0;
  std::uint32_t levels = 0;  // levels of the canonical plan
  std::uint32_t passes = 0;  // passes over the data through disk
  double seconds = 0;
  std::uint64_t bytes_read = 0;     // from the input and scratch space
  std::uint64_t bytes_written = 0;  // to scratch space and the output
  std::uint64_t peak_rss_bytes = 0;
  // Of the process's memory, the most backed by transparent huge pages at
  // the end of a node run in RAM or of the whole walk, while its arena is
  // held (0: the kernel gave none).
  std::uint64_t huge_page_bytes = 0;
  // Where the time went (wall seconds on the driving thread).
  double seconds_reading = 0, seconds_shuffling = 0, seconds_scattering = 0, seconds_writing = 0;
};

}  // namespace extshuffle
