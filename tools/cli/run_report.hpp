// What both tools print of a run, in one place: the logging set-up (spdlog
// on stderr, "PROGRAM: <message>"), the notes and warnings the library
// returns, and the RESULT line of --stats, whose fields extshuffle-mpi
// prints too, adding its own after them.
#pragma once

#include <string>
#include <vector>

#include "extshuffle/run_result.hpp"
#include "options.hpp"

namespace extshuffle::cli {

// Logging on stderr through spdlog: errors only with -q (or `errors_only`:
// extshuffle-mpi's ranks but 0, so that -v is read once), everything with
// -v, else warnings; std::cerr, which only STXXL writes to, muted unless -v.
void set_up_logging(const Options& options, const char* program, bool errors_only = false);

// What a run says besides its output (RunResult's, mpi::DistributedResult's),
// through the logger set_up_logging made: notes under -v, warnings unless
// -q, and warnings about the files on disk (output_warnings) even with -q.
void say_messages(const std::vector<std::string>& notes, const std::vector<std::string>& warnings,
                  const std::vector<std::string>& output_warnings);

// --stats: "RESULT key=value ..." of a run's measured facts
// (result_fields.hpp), then the seed, without a newline.
std::string result_line(const RunStats& stats, std::uint64_t seed);

}  // namespace extshuffle::cli
