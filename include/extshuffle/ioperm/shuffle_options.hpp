// What the shuffles of the canonical plan are told, composed from the parts
// each layer needs: the permutation and its back end (ShuffleOptions), the
// walk through memory and disk (WalkOptions), and the syntax of text
// records (TextOptions). Only ShuffleOptions' seed and constants decide the
// output; the rest decides where and how fast it is made.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "extshuffle/core/plan.hpp"
#include "extshuffle/device/shuffle_records.hpp"
#include "extshuffle/formats/record_syntax.hpp"
#include "extshuffle/ioperm/run_options.hpp"

namespace extshuffle::ioperm {

class WalkCheckpoint;

struct ShuffleOptions {
  std::size_t record_size = 0;  // bytes of a fixed-size record; text: unused
  std::uint64_t seed = 0;
  core::PlanConstants constants = core::kPlanV2;
  device::Device device = device::Device::kCpu;
  int threads = 0;  // 0 = all cores; never changes the output
};

struct WalkOptions {
  ShuffleOptions shuffle;
  std::uint64_t memory_bytes = 0;  // the buffers the walk allocates stay within this
  // Only the first this many records of the permutation are output (-n):
  // buckets wholly past them are neither written to scratch nor read back.
  std::uint64_t output_records = UINT64_MAX;
  // When set, bytes read plus written so far are published here (progress display).
  std::atomic<std::uint64_t>* progress_bytes = nullptr;
  // --checkpoint: the root's split reports its points here and resumes from
  // the last durable one (walk_checkpoint.hpp); null: not checkpointed.
  WalkCheckpoint* checkpoint = nullptr;
};

// The walk's options for records of record_size bytes (0: text) under the
// run's permutation, device, threads and memory; output_records, progress
// and checkpoint left to the caller.
inline WalkOptions walk_options(const RunOptions& run, std::size_t record_size) {
  return WalkOptions{{record_size, run.seed, run.constants, run.device, run.threads}, run.memory_bytes};
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
