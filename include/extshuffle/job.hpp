// One run of either tool: the Job (docs/conventions.md, The Job and its commit). Its datasets (one, or
// several aligned ones shuffled by one permutation), each dataset's inputs
// and output (a file, standard output "-", or a name pattern cut into the
// pieces of --shards/--split), the manifest, and the options. The CLI of
// extshuffle and of extshuffle-mpi builds one with make_job(); the
// single-machine driver (driver/run_job.hpp) and the distributed run
// (mpi/distributed_run.hpp) run the same Job. Pure data: it reads nothing.
// The rooms below the driver never see JobOptions whole: the driver gives
// each its slice (driver/job_slices.hpp, docs/conventions.md, Rooms).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "extshuffle/core/plan.hpp"
#include "extshuffle/device/shuffle_records.hpp"
#include "extshuffle/formats/format_detection.hpp"
#include "extshuffle/dataset/split_part.hpp"

namespace extshuffle {

// Progress of the passes through disk: bytes read plus written so far, and
// the schedule's expected total (done may pass it slightly). Called from a
// background thread of the run, never concurrently with itself: once with
// done_bytes 0 as the passes start, then about twice a second. It must not
// throw.
using ProgressCallback = std::function<void(std::uint64_t done_bytes, std::uint64_t total_bytes)>;

// Told once, from another thread, when the run has waited a second for
// something another process holds (the commit lock of another run into the
// same files): what it waits for, and the path. It must not throw.
using WaitCallback = std::function<void(const std::string& message)>;

struct JobOptions {
  std::uint64_t seed = 0;
  std::size_t record_size = 0;     // bytes per fixed-size record; 0: not given (text, or a .npy's rows)
  std::uint64_t memory_bytes = 0;  // hard cap on peak RSS, less a small fixed allowance
  std::string tmpdir;              // scratch directory; empty: $TMPDIR, else /tmp
  int threads = 1;                 // worker threads, positive (the CLI resolves "all cores"); never changes the output
  formats::Format format = formats::Format::kAuto;
  bool zero_terminated = false;  // -z: lines end with NUL
  bool ignore_zeros = false;  // --ignore-zeros: a tar archive's zero blocks are read through, not its end
  std::int64_t header_lines = -1;  // --header[=N] kept on top; -1: 1 for CSV/TSV, else 0
  bool skip_empty = false;         // --skip-empty: blank lines are not records
  core::PlanConstants constants = core::kPlanV2;
  device::Device device = device::Device::kCpu;
  std::uint64_t head_count = UINT64_MAX;  // -n: output only the first K records of the permutation
  // shuf's generated inputs, printed one per line instead of reading a file:
  // -e: the arguments themselves; -i LO-HI: the integers LO..HI.
  bool echo = false;
  std::vector<std::string> echo_items;
  bool integer_range = false;
  std::uint64_t range_low = 0, range_high = 0;  // HI may be 2^64 - 1: the range may hold 2^64 numbers
  // shuf's -r/--repeat: output head_count records drawn with replacement (an
  // endless stream when head_count is UINT64_MAX), draw j's record from
  // stream purpose 5 (docs/design.md); never changes runs without it.
  bool repeat = false;
  bool verify = false;  // --verify: fail unless the output is a permutation of the input
  bool dry_run = false;  // describe the plan and the schedule; read the input's format only, write nothing
  // --checkpoint DIR: scratch and a journal kept in DIR, so that the same
  // command run again resumes where this run stopped (docs/cli.md "Resuming
  // a run"); empty: none (scratch unnamed, nothing survives the run).
  std::string checkpoint_dir;
  ProgressCallback progress;  // empty: no progress reports
  WaitCallback waiting;       // empty: waits are silent

  // --- Datasets: several inputs as one, shards, splits, a manifest (docs/cli.md "Datasets") ---
  // With any of these, each dataset's output is a pattern holding {split}, {shard}, {shards}.
  std::uint64_t shard_count = 0;  // --shards K; 0: not given
  std::uint64_t shard_bytes = 0;  // --shard-size: bytes of a shard's records at most; 0: not given
  std::vector<SplitPart> splits;  // --split, in order; empty: one output
  std::string manifest_path;      // --manifest FILE.json; empty: none
  bool clean = false;             // --clean: remove the pattern's files this run does not write, after the commit
  // --- end of datasets ---
  // Record indexes (docs/cli.md "Record indexes"): --index, each output
  // file's index beside it; --index-only, each input's index, no shuffle
  // (each dataset's output: the index of its one input file, or "-": each
  // input's beside it).
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
