// The checks of a Job's plan that look at its destinations' directories
// (driver/job_files.hpp), before any work: nothing a run reads is ever
// removed or replaced (docs/cli.md "The commit").
#pragma once

#include <sys/types.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "extshuffle/dataset/output_commit.hpp"
#include "extshuffle/job.hpp"

namespace extshuffle::driver {

// Device and inode of each input file, and its name as given.
using InputFiles = std::map<std::pair<dev_t, ino_t>, std::string>;

// Every destination a Job commits into: each dataset's pattern (or file)
// and the manifest, with the directories their names lie in (each opened
// now, io/destination_directory.hpp). `known_names`: each dataset's output
// names known up front.
std::vector<dataset::CommitDestination> commit_destinations(const Job& job,
                                                            const std::vector<std::vector<std::string>>& known_names);

// Refuses (UsageError, exit 2) a Job that could remove or replace what it
// reads: an input that is a name a dataset's pattern can produce (a piece,
// or a stale piece --clean removes; --shard-size's whole name space, as the
// piece count is known only at the end) or a leftover's name; a manifest
// named as a pattern's piece. `in_place`: a single file's -o may be its
// input (shuf -o).
void check_destination_names(const Job& job, const std::vector<dataset::CommitDestination>& destinations,
                             const InputFiles& inputs);

// Refuses standard output (or -o /dev/stdout, /dev/fd/N) that is a regular
// file the run reads: `extshuffle in >> in` would read its own output (as
// cat's "input file is output file").
void check_standard_output(const Job& job, const InputFiles& inputs);

}  // namespace extshuffle::driver
