// The library's entry point for one run on one machine (docs/conventions.md, The Job and its commit): runs
// a Job built by make_job() (extshuffle/job.hpp). It prints nothing: the
// caller prints the dry-run text and the RESULT fields it returns, and draws
// progress from RunOptions::progress.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "extshuffle/job.hpp"
#include "extshuffle/run_result.hpp"

namespace extshuffle::driver {

// Runs `job`: with one dataset, shuf's modes or one shuffle; with aligned
// datasets, every input is opened and counted first and the counts compared
// (InputError when they differ) before any output is written, then each is
// shuffled by the one permutation of the seed and the common count. With
// --manifest, the manifest is opened before any work and written once every
// output is in place. Each output is written under a temporary name and
// renamed into place once complete. Throws the typed errors of
// extshuffle/errors.hpp.
JobResult run_job(const Job& job);

// The seed of the run checkpointed in `directory` (--checkpoint DIR), read
// from its journal without taking its lock: a command without --seed
// resumes with the seed its first run drew. Nothing when DIR holds no
// checkpoint. Throws Error when its journal is damaged.
std::optional<std::uint64_t> checkpointed_seed(const std::string& directory);

// --dry-run's line naming the leftovers of interrupted runs (hidden
// temporaries, extshuffle-mpi's partial outputs) that the commit removes.
std::string leftovers_line(const std::vector<std::string>& leftovers);

}  // namespace extshuffle::driver
