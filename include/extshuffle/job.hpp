// One run of either tool: the Job (docs/conventions.md, The Job and its commit). Its datasets (one, or
// several aligned ones shuffled by one permutation), each dataset's inputs
// and output (a file, standard output "-", or a name pattern cut into the
// pieces of --shards/--split), the manifest, and the options. The CLI of
// extshuffle and of extshuffle-mpi builds one with make_job(); the
// single-machine driver (driver/run_job.hpp) and the distributed run
// (mpi/distributed_run.hpp) run the same Job. Pure data: it reads nothing.
// The rooms below the Job never see JobOptions whole: the driver gives each
// its slices, which JobOptions holds (docs/conventions.md, Rooms).
#pragma once

#include <string>
#include <vector>

#include "extshuffle/dataset/dataset_options.hpp"
#include "extshuffle/ioperm/run_options.hpp"
#include "extshuffle/modes/mode_options.hpp"

namespace extshuffle {

// A Job's options are the rooms' slices, held whole: each room reads its own
// by const reference, and nothing is copied from one shape into another
// (docs/conventions.md, Rooms). The CLI sets them through its option table
// (tools/cli/option_table.cpp), Python through the same table's keywords.
struct JobOptions {
  ioperm::RunOptions run;         // what every room shares: seed, constants, memory, threads, device, scratch,
                                  // --dry-run, --manifest, --checkpoint, the callbacks
  dataset::DatasetOptions input;  // how each dataset's inputs are read (--format, -z, --header, --verify, -r...)
  dataset::OutputOptions output;  // -n, and how each dataset's output is cut into files (--split, --shards...)
  modes::ModeOptions mode;        // shuf's generated inputs: -e, -i
  // Record indexes (docs/cli.md "Record indexes"), the driver's own:
  // --index, each output file's index beside it; --index-only, each input's
  // index, no shuffle (each dataset's output: the index of its one input
  // file, or "-": each input's beside it).
  bool index = false;
  bool index_only = false;
};

// One dataset of a Job: inputs read as one, their records concatenated in
// this order ("-": standard input; a directory stands for its files in name
// order), and its output ("-": standard output; with --shards/--split a
// pattern).
struct JobDataset {
  std::vector<std::string> inputs;
  std::string output = "-";
};

struct Job {
  JobOptions options;
  // One dataset, or several aligned ones (features and labels: one input
  // each, equal record counts, one permutation).
  std::vector<JobDataset> datasets;
};

// Builds a Job and checks what needs no input: at least one dataset, each
// with an input and an output; aligned datasets of one input each and not
// standard input; positive threads; --dry-run not on standard input;
// --checkpoint only with a shuffle of input files into files (not -e, -i,
// -r, standard input or output). The checks that need the inputs (their formats, records, the budget) are the
// runner's, before any output is written. Throws UsageError.
Job make_job(JobOptions options, std::vector<JobDataset> datasets);

}  // namespace extshuffle
