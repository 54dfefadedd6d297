#include "rank_run.hpp"

namespace extshuffle::mpi {

using State = DistributedInput::State;

ioperm::TextOptions walk_options(const JobOptions& options, std::uint64_t output_records, const State& in,
                                 std::uint64_t memory_bytes, device::Device device,
                                 std::atomic<std::uint64_t>* progress) {
  ioperm::TextOptions o;
  o.walk = ioperm::walk_options(options.run, in.record_size);
  o.walk.run.device = device;
  o.walk.run.memory_bytes = memory_bytes;
  o.walk.output_records = output_records;
  o.walk.progress_bytes = progress;
  o.syntax = in.syntax;
  return o;
}

ioperm::DistributedWalk walk_for(const JobOptions& options, std::uint64_t output_records, const State& in,
                                 std::uint64_t memory_bytes, device::Device device,
                                 std::atomic<std::uint64_t>* progress) {
  return ioperm::DistributedWalk(walk_options(options, output_records, in, memory_bytes, device, progress), in.framed);
}

void add_walk_stats(RankStats& rank, const ioperm::WalkStats& e) {
  rank.bytes_read += e.bytes_read;
  rank.bytes_written += e.bytes_written;
}

}  // namespace extshuffle::mpi
