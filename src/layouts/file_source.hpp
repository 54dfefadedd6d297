// The records of a node in RAM read from its bytes in batches
// (layouts/fixed_records.cpp, the ways that read).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "extshuffle/io/byte_extents.hpp"
#include "extshuffle/ioperm/phase_timer.hpp"
#include "ioperm/walk_support.hpp"
#include "ioperm/memory_plan.hpp"
#include "ioperm/run_context.hpp"

namespace extshuffle::ioperm {

// A node's records read from its bytes in the batches the in-RAM plan asks
// for: with two buffers, the next batch read while this one is shuffled;
// with one, each batch read when it is asked for.
class FileSource final : public RecordSource {
 public:
  FileSource(const io::ByteExtents& data, std::size_t r, std::uint64_t n, std::uint64_t batch_records,
             std::byte* buffers, std::uint64_t buffer_count, RunContext& ctx, double& reading)
      : reader_(data), r_(r), n_(n), batch_(batch_records), ctx_(ctx), reading_(reading) {
    buffers_[0] = buffers;
    buffers_[1] = buffer_count >= 2 ? buffers + align_up(batch_records * r, 64) : buffers;
    start(0);
  }
  const std::byte* records(std::uint64_t first, std::uint64_t) override {
    if (!pending_) start(first);
    {
      PhaseTimer timer(reading_);
      reader_.finish();
    }
    pending_ = false;
    const std::byte* ready = buffers_[which_];
    if (buffers_[1] != buffers_[0]) {
      which_ ^= 1;
      start(first + std::min(batch_, n_ - first));
    }
    return ready;
  }

 private:
  void start(std::uint64_t first) {
    if (first >= n_) return;
    const std::uint64_t bytes = std::min(batch_, n_ - first) * r_;
    reader_.start(buffers_[which_], bytes);
    ctx_.stats.bytes_read += bytes;
    pending_ = true;
  }
  io::ExtentReader reader_;
  std::size_t r_;
  std::uint64_t n_, batch_;
  RunContext& ctx_;
  double& reading_;
  std::byte* buffers_[2] = {};
  int which_ = 0;
  bool pending_ = false;  // a read into buffers_[which_] was started
};

}  // namespace extshuffle::ioperm
