// From the command line to the library's Job (extshuffle/job.hpp): every
// check that needs no input (syntax of sizes, seeds, ranges; which operands
// are files), with the defaults resolved (memory budget, thread count,
// seed). extshuffle and extshuffle-mpi take the same command line to the
// same Job.
#pragma once

#include <string>

#include "extshuffle/job.hpp"
#include "options.hpp"

namespace extshuffle::cli {

// Validates `options` and builds the Job: its datasets, in order, are one
// (every operand an input of it with one -o), or several aligned inputs
// ("x.npy y.npy -o xs.npy -o ys.npy") shuffled by one permutation, one
// input each; with -e or -i, the one output, from input "-". Draws a random
// seed when none is given (logged at info level so -v shows it) and warns
// when the testing knobs change the permutation, through spdlog's default
// logger. Throws UsageError with a one-line message, and IoError /
// InputError for a --random-source file that cannot be read or is too
// short. Cost: reads /proc and /sys for the default memory budget, and the
// random source's first 8 bytes; no input is opened.
Job make_job(const Options& options);

// A drawn seed is the only way to make a written dataset again: the line
// that says it, printed at the default verbosity once the run has written
// one (shards, splits or a manifest; it is in the manifest and the RESULT
// line too); empty for a run given its seed, or writing no dataset.
std::string drawn_seed_line(const Options& o, const JobOptions& options);

}  // namespace extshuffle::cli
