// The one mapping from an error to what the user sees, for every front
// end: the exit code (0 success, 1 runtime failure, 2 usage error) and the
// one line "<what>: <why>". extshuffle's main() prints it after
// "extshuffle: "; Python's shuffle() raises it (python/src/shuffle_bindings.cpp);
// extshuffle-mpi's ranks agree on the failing rank's (mpi/rank_failure.hpp),
// which main() prints after "extshuffle-mpi: rank R: ". It is the library's,
// not a tool's, because the library must word a failure itself where no
// main() can catch it: a rank wording its exception for the other ranks,
// which cannot receive an exception, or ending the job from inside a data
// exchange (mpi::abort_job). The front ends add only their name, and Python
// the options named as keywords.
#pragma once

#include <exception>
#include <string>

namespace extshuffle::driver {

struct ErrorReport {
  int exit_code = 1;
  std::string line;  // one line, without the program's name
};

// The reason given for memory exhausted, also written by a handler that
// cannot format a message (tools/cli/standard_streams.cpp).
inline constexpr char kOutOfMemory[] = "out of memory: lower --memory or raise the process's memory limit";

// What `error` (any exception) reports. Most messages carry their <what>
// ("input 'x': ...", "invalid --memory '0': ..."); one that does not gets
// the part of the run it concerns: the command line for usage errors, the
// input for bad records, the run otherwise. Memory exhausted (std::bad_alloc,
// a thread that cannot start for want of it) is kOutOfMemory, exit 1, as
// shuf says it. Newlines become spaces. Never throws.
ErrorReport describe_error(const std::exception_ptr& error) noexcept;

}  // namespace extshuffle::driver
