// What the walk and a record layout share while one plan runs: the
// options, the arena, the statistics, progress, and the output cut at -n.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "extshuffle/ioperm/fixed_size_shuffle.hpp"
#include "extshuffle/ioperm/phase_timer.hpp"

namespace extshuffle::ioperm {

// The output of the run, cut after the first `limit` records (-n): positions
// at or past it are neither written nor, where the walk can tell in
// advance, computed.
class OutputLimiter {
 public:
  OutputLimiter(const OutputSink& sink, std::uint64_t limit, WalkStats& stats)
      : sink_(sink), limit_(limit), stats_(stats) {}

  // Is output position `first` among those asked for?
  bool wanted(std::uint64_t first) const { return first < limit_; }
  std::uint64_t records_left() const { return limit_ - std::min(limit_, emitted_records_); }
  bool done() const { return emitted_records_ >= limit_; }
  std::uint64_t emitted() const { return emitted_records_; }
  // A run resumed from its checkpoint (walk_checkpoint.hpp): `records` were
  // output before it.
  void resume(std::uint64_t records) { emitted_records_ = records; }

  // Hands on `bytes` holding `records` whole records, already cut at
  // records_left() by the caller.
  void write(const std::byte* data, std::uint64_t bytes, std::uint64_t records) {
    PhaseTimer timer(stats_.seconds_writing);
    if (bytes > 0) sink_(data, bytes);
    emitted_records_ += records;
    stats_.bytes_written += bytes;
  }

  // Fixed-size records: cut at the limit here.
  void write_fixed(const std::byte* data, std::uint64_t bytes, std::size_t record_size) {
    const std::uint64_t take = std::min<std::uint64_t>(bytes / record_size, records_left());
    if (take > 0) write(data, take * record_size, take);
  }

 private:
  const OutputSink& sink_;
  std::uint64_t limit_;
  WalkStats& stats_;
  std::uint64_t emitted_records_ = 0;
};

struct RunContext {
  const WalkOptions& options;
  WalkStats& stats;
  OutputLimiter& output;
  std::byte* arena;     // options.run.memory_bytes bytes, allocated once for the run
  int threads;          // worker threads, resolved
  // The root's records are in memory already, its data one extent there: a
  // text input that fits in RAM is mapped while its records are counted, so
  // it is read once, and the arena is only their workspace; a fixed-size
  // one is mapped, so it is read without a copy (record_layout.hpp,
  // mapped_arena_bytes).
  bool root_mapped = false;

  void publish_progress() const {
    if (options.progress_bytes) {
      options.progress_bytes->store(stats.bytes_read + stats.bytes_written, std::memory_order_relaxed);
    }
  }
};

}  // namespace extshuffle::ioperm
