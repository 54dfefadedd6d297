// What the steps of one rank's distributed run share (distributed_run.cpp
// runs them; root_exchange.cpp is step 3), and what each step tells the walk.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "extshuffle/mpi/communicator.hpp"
#include "extshuffle/mpi/distributed_run.hpp"
#include "extshuffle/dataset/record_digest.hpp"
#include "extshuffle/ioperm/distributed_walk.hpp"
#include "extshuffle/job.hpp"
#include "inputs/distributed_input.hpp"
#include "outputs/piece_plan.hpp"
#include "outputs/shared_pieces.hpp"

namespace extshuffle::mpi {

class JobResume;

using Clock = std::chrono::steady_clock;

// Seconds since `t0`.
inline double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// What the steps of one rank share.
struct RankRun {
  const JobOptions& options;
  // The output's first records that are written: -n until the pieces are
  // planned, then the records they take (-n, or where the last split ends).
  std::uint64_t output_records = 0;
  const std::string& output_path;
  const std::string display_name;  // of the input
  DistributedInput::State& in;
  Communicator& comm;
  int me = 0;
  RankStats stats;
  PiecePlan plan;
  std::unique_ptr<SharedPieces> files;
  dataset::RecordDigest written;  // --verify: the records this rank wrote
  std::vector<std::string> warnings;
  std::atomic<std::uint64_t>* progress = nullptr;  // rank 0 with --progress: its walks' bytes
  JobResume* resume = nullptr;                     // --checkpoint's (resume/job_resume.hpp)
  std::size_t dataset_index = 0;                   // the dataset's in the Job
};

// What the walk is told, for an arena of `memory_bytes` on `device`, when
// the output's first `output_records` records are written.
ioperm::TextOptions walk_options(const JobOptions& options, std::uint64_t output_records,
                                 const DistributedInput::State& in, std::uint64_t memory_bytes, device::Device device,
                                 std::atomic<std::uint64_t>* progress = nullptr);
ioperm::DistributedWalk walk_for(const JobOptions& options, std::uint64_t output_records,
                                 const DistributedInput::State& in, std::uint64_t memory_bytes, device::Device device,
                                 std::atomic<std::uint64_t>* progress = nullptr);
// A walk's bytes read and written, added to the rank's.
void add_walk_stats(RankStats& rank, const ioperm::WalkStats& e);

}  // namespace extshuffle::mpi
