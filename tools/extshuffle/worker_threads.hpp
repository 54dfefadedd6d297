// The worker threads of a run, started before any work: extshuffle's main()
// and Python's shuffle() (python/src/shuffle_bindings.cpp) both start them
// so, and so both report a thread count the process cannot hold as the
// same one line.
#pragma once

namespace extshuffle::cli {

// Starts OpenMP's `threads` worker threads now, while memory is plentiful.
// libgomp ends the process with a line of its own (or a SIGSEGV) when one
// cannot start; as many threads started and joined first, with the same
// default attributes, throw std::system_error instead (cli::describe_error:
// out of memory), and their stacks stay in glibc's cache for libgomp's
// threads, started next. Cost: `threads` thread starts.
void start_worker_threads(int threads);

}  // namespace extshuffle::cli
