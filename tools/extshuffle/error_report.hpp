// The CLI's one mapping from an error to what the user sees: the exit code
// (0 success, 1 runtime failure, 2 usage error) and the one line
// "<what>: <why>" printed after "extshuffle: ". extshuffle's main() prints
// it; Python's shuffle() raises it (python/src/shuffle_bindings.cpp), so
// that a failure reads the same from both.
#pragma once

#include <exception>
#include <string>

namespace extshuffle::cli {

struct ErrorReport {
  int exit_code = 1;
  std::string line;  // one line, without the program's name
};

// What `error` (any exception) reports. Most messages carry their <what>
// ("input 'x': ...", "invalid --memory '0': ..."); one that does not gets
// the part of the run it concerns: the command line for usage errors, the
// input for bad records, the run otherwise. Memory exhausted (std::bad_alloc,
// a thread that cannot start for want of it) is "run: out of memory: ...",
// exit 1, as shuf says it. Newlines become spaces. Never throws.
ErrorReport describe_error(const std::exception_ptr& error) noexcept;

}  // namespace extshuffle::cli
