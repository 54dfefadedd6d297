// Every file a Job reads and writes (docs/conventions.md, The Job and its commit), listed and
// checked before any work: every input (directories expanded), every output
// of every aligned dataset with its shard and split names expanded, the
// manifest. What would lose data or fail late is refused up front:
// - two writes to one file (compared by device and inode after symbolic
//   links, so hard links and ./x vs x count; writes into one character
//   device, /dev/null twice, are harmless and allowed);
// - a write to an input, except the documented in-place form: the -o of a
//   single dataset naming one of its inputs (as shuf -o);
// - an output directly inside an input directory (the next run would read
//   it back in);
// - more output files than the process may hold descriptors (after raising
//   the soft limit to the hard one).
// Those are usage errors (exit 2), and so are names that cannot be created
// (a missing or non-directory parent, a directory in the way, a name longer
// than the file system takes), refused before any work in the words opening
// the file would have used.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "extshuffle/dataset/output_commit.hpp"
#include "extshuffle/job.hpp"

namespace extshuffle::driver {

struct JobFiles {
  std::vector<std::string> reads;                   // every input file, directories expanded; "-" for standard input
  std::vector<std::string> writes;                  // every output file whose name is known up front, then the manifest
  std::vector<std::pair<dev_t, ino_t>> read_files;  // device and inode of every input file: never removed or replaced
  std::vector<dataset::CommitDestination> destinations;  // every pattern (or file) the commit writes, the manifest last
  std::vector<std::string> leftovers;  // left by an interrupted run into these destinations (removed at the commit)
  std::uint64_t output_files = 0;      // files the outputs hold open until the commit (0: known only at the end)
  std::uint64_t descriptors = 0;       // descriptors the run needs at most (inputs, outputs, a reserve)
};

// Lists the files of `job` and checks them. Throws UsageError or IoError.
JobFiles check_job_files(const Job& job);

}  // namespace extshuffle::driver
