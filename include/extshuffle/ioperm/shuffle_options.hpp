// What the shuffles of the canonical plan are told: the run's own part
// (RunOptions: the permutation, the budget, where the work runs), read as
// the Job holds it, with what each layer adds: the records an in-RAM plan
// moves (ShuffleOptions), the walk through memory and disk (WalkOptions),
// and the syntax of text records (TextOptions). Only the run's seed and
// constants decide the output; the rest decides where and how fast it is
// made. A field of RunOptions is written once, where the Job is made, and
// copied nowhere field by field (docs/conventions.md, Rooms).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "extshuffle/formats/record_syntax.hpp"
#include "extshuffle/ioperm/run_options.hpp"

namespace extshuffle::ioperm {

class WalkCheckpoint;

// What an in-RAM plan (memory_plan.hpp, the reference shuffle) is told: the
// run's part, by reference, and the size of what it moves, which is not
// always the walk's records (a text node's plan moves 4-byte record
// indices). A view: the RunOptions must outlive it.
struct ShuffleOptions {
  const RunOptions& run;
  std::size_t record_size;  // bytes of what is moved
};

struct WalkOptions {
  // The run's part, whole: the walk's budget is run.memory_bytes (the
  // buffers it allocates stay within it) and it runs on run.device. A copy,
  // so that a walk may be given its own arena or device (extshuffle-mpi's
  // root exchange: its share of the budget, on the CPU).
  RunOptions run;
  std::size_t record_size = 0;  // bytes of a fixed-size record; 0: text
  // Only the first this many records of the permutation are output (-n):
  // buckets wholly past them are neither written to scratch nor read back.
  std::uint64_t output_records = UINT64_MAX;
  // When set, bytes read plus written so far are published here (progress display).
  std::atomic<std::uint64_t>* progress_bytes = nullptr;
  // --checkpoint: the root's split reports its points here and resumes from
  // the last durable one (walk_checkpoint.hpp); null: not checkpointed.
  WalkCheckpoint* checkpoint = nullptr;

  // What an in-RAM plan of the walk's records is told (valid while this is).
  ShuffleOptions shuffle() const { return {run, record_size}; }
};

// The walk's options for records of record_size bytes (0: text) under the
// run's part; output_records, progress and checkpoint left to the caller.
inline WalkOptions walk_options(const RunOptions& run, std::size_t record_size) {
  return WalkOptions{.run = run, .record_size = record_size};
}

struct TextOptions {
  WalkOptions walk;
  formats::RecordSyntax syntax;
  // --skip-empty: blank records of the input are not records (N counts the others).
  bool skip_blank = false;
  // The root's bytes are spools in scratch space, read back (the counting
  // pass read them first): a count that differs is damaged scratch.
  bool root_spooled = false;
};

}  // namespace extshuffle::ioperm
