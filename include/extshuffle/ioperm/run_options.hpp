// What every room of a Job shares (docs/conventions.md, Rooms): the
// permutation (seed, plan constants), the budget and where the work runs
// (memory, threads, device, scratch), the run's files beside its outputs
// (manifest, checkpoint), and the front end's callbacks. The Job holds it
// (job.hpp, JobOptions::run); each room reads it by const reference. It sits
// here, with the walk, the lowest room that reads it: the walk's seed,
// constants, device, threads and memory come from it (shuffle_options.hpp).
// Only seed and constants decide the output; the rest decides where and how
// fast it is made, and what is told of it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "extshuffle/core/plan.hpp"
#include "extshuffle/device/shuffle_records.hpp"

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

}  // namespace extshuffle

namespace extshuffle::ioperm {

struct RunOptions {
  std::uint64_t seed = 0;
  core::PlanConstants constants = core::kPlanV2;
  std::uint64_t memory_bytes = 0;  // hard cap on peak RSS, less a small fixed allowance
  int threads = 1;                 // worker threads, positive (the CLI resolves "all cores"); never changes the output
  device::Device device = device::Device::kCpu;
  std::string tmpdir;         // scratch directory; empty: $TMPDIR, else /tmp
  bool dry_run = false;       // describe the plan and the schedule; read the input's format only, write nothing
  std::string manifest_path;  // --manifest FILE.json; empty: none
  // --checkpoint DIR: scratch and a journal kept in DIR, so that the same
  // command run again resumes where this run stopped (docs/cli.md "Resuming
  // a run"); empty: none (scratch unnamed, nothing survives the run).
  std::string checkpoint_dir;
  ProgressCallback progress;  // empty: no progress reports
  WaitCallback waiting;       // empty: waits are silent
};

}  // namespace extshuffle::ioperm
