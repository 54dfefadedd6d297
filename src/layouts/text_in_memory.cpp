// A text node in RAM (docs/conventions.md, The walk, Record formats): its bytes held once, the place
// of each record found in them, the plan run on the records' 4-byte indices
// (memory_plan.hpp, the same bijections, rows and scatter as for
// fixed-size records), and the bytes gathered in the resulting order.
#include <omp.h>

#include <algorithm>
#include <cstring>
#include <exception>
#include <utility>

#include "ioperm/walk_support.hpp"
#include "extshuffle/device/host_memory.hpp"
#include "extshuffle/device/node_on_device.hpp"
#include "extshuffle/errors.hpp"
#include "extshuffle/formats/terminator_scan.hpp"
#include "ioperm/memory_plan.hpp"
#include "ioperm/position_tag.hpp"
#include "text_records.hpp"
#include "ioperm/tuning.hpp"

namespace extshuffle::ioperm {
namespace {

std::uint64_t staging_bytes(std::uint64_t budget) {
  return std::clamp<std::uint64_t>(align_down(budget / 16, 64), tuning::kMinStagingBytes, tuning::kMaxStagingBytes);
}

std::uint64_t gather_batch_records(std::uint64_t budget) {
  return std::clamp<std::uint64_t>(budget / tuning::kGatherBatchBudgetDivisor, tuning::kMinGatherBatchRecords,
                                   tuning::kMaxGatherBatchRecords);
}

// The first of the m records placed at `starts` (ascending, the last ending
// at `total` bytes) whose start lies in share `part` of `parts` equal shares
// of the bytes; m for part == parts.
std::uint64_t byte_share_start(const std::uint64_t* starts, std::uint64_t m, std::uint64_t total, int part,
                               int parts) {
  if (part >= parts) return m;
  const std::uint64_t at = total / static_cast<std::uint64_t>(parts) * static_cast<std::uint64_t>(part);
  return static_cast<std::uint64_t>(std::lower_bound(starts, starts + m, at) - starts);
}

// A text node's in-RAM plan moves 4-byte record indices.
ShuffleOptions index_options(const TextOptions& o) { return {o.walk.run, sizeof(std::uint32_t)}; }

// Output of an in-RAM node: whole records staged and handed on together,
// one larger than the staging buffer handed on alone.
class StagedOutput {
 public:
  StagedOutput(RunContext& ctx, std::byte* staging, std::uint64_t capacity)
      : ctx_(ctx), staging_(staging), capacity_(capacity) {}
  void record(const std::byte* data, std::uint64_t bytes) {
    if (ctx_.output.done()) return;
    if (bytes > capacity_ - fill_) flush();
    if (bytes > capacity_) {
      ctx_.output.write(data, bytes, 1);
      ctx_.publish_progress();
      return;
    }
    std::memcpy(staging_ + fill_, data, bytes);
    fill_ += bytes;
    ++records_;
  }
  void flush() {
    if (fill_ > 0) {
      ctx_.output.write(staging_, fill_, records_);
      ctx_.publish_progress();
    }
    fill_ = records_ = 0;
  }

 private:
  RunContext& ctx_;
  std::byte* staging_;
  std::uint64_t capacity_;
  std::uint64_t fill_ = 0, records_ = 0;
};

// The arrays of a node in RAM, carved from its workspace in the order
// text_in_memory_workspace_bytes counts them.
struct NodeArrays {
  std::uint64_t* offsets;  // where each record starts (untagged: and one past the last)
  std::uint32_t* lengths;  // tagged: each record's length, from its tag
  std::uint32_t* indices;  // the plan's output
  std::byte* plan_workspace;
  std::uint32_t* identity;  // the plan's input batches
  std::uint64_t* batch_offsets;
  std::byte* staging;
};

NodeArrays carve_node_arrays(std::uint64_t n, bool tagged, const ShuffleOptions& index, std::uint64_t batch_records,
                             std::byte* workspace) {
  NodeArrays a{};
  std::byte* cursor = workspace;
  a.offsets = carve<std::uint64_t>(cursor, tagged ? n : n + 1);
  a.lengths = tagged ? carve<std::uint32_t>(cursor, n) : nullptr;
  a.indices = carve<std::uint32_t>(cursor, n);
  a.plan_workspace = cursor;
  cursor += MemoryPlan::workspace_bytes(n, index, MemoryMode::kShuffle);
  a.identity = carve<std::uint32_t>(cursor, MemoryPlan::batch_bytes(n, index) / 4);
  a.batch_offsets = carve<std::uint64_t>(cursor, batch_records);
  a.staging = cursor;
  return a;
}

// Step 1, where each record is: in bulk for plain terminators, by the
// syntax otherwise; behind its tag, wherever it lies, when it was routed
// here. Throws (TextScan::throw_records_changed) unless the bytes hold
// exactly the node's `n` records.
void locate_records(const std::byte* bytes, std::uint64_t size, std::uint64_t n, bool tagged, const TextScan& s,
                    char terminator, const NodeArrays& a) {
  const std::byte* at = bytes;
  const std::byte* end = bytes + size;
  if (tagged) {
    locate_tagged_records(bytes, size, n, PositionTag::for_node(n, true), s, a.offsets, a.lengths);
    at = end;
  } else if (s.plain_terminators()) {
    a.offsets[0] = 0;
    const auto* text = reinterpret_cast<const char*>(bytes);
    if (formats::find_record_ends(text, text + size, terminator, n, a.offsets + 1) < n) {
      s.throw_records_changed(n);
    }
    at = bytes + a.offsets[n];
  } else {
    for (std::uint64_t k = 0; k < n; ++k) {
      const std::byte* stop = s.next_record(at, end);
      if (!stop) s.throw_records_changed(n);
      a.offsets[k] = static_cast<std::uint64_t>(at - bytes);
      at = stop;
    }
  }
  if (at != end && (!s.filter_blank || s.next_record(at, end))) s.throw_records_changed(n);
  if (!tagged) a.offsets[n] = size;
}

// Step 4, the gather: random access into the node's bytes, bound by memory
// latency. Batches of the records in the plan's order are placed in one
// half of the staging buffer by a prefix sum of their lengths; while the
// other threads copy them there, the driving thread writes the batch before
// from the other half (docs/benchmarks.md, "Text in RAM: the counting pass
// read ahead, the gather beside the write"): with one thread gathering and
// writing in turn, the second core idled through the write's copy and
// digest.
class RecordGather {
 public:
  // A batch of at least this many bytes is copied by the other threads
  // while the driving thread writes the batch before; a smaller one is
  // written and copied in turn (at -S 16M, halves of 512 KiB, the parallel
  // steps cost 1.2 s of user time per GiB of heavy-tailed JSONL).
  static constexpr std::uint64_t kMinOverlappedBytes = std::uint64_t{1} << 20;

  RecordGather(const std::byte* bytes, std::uint64_t size, std::uint64_t n, bool tagged, const TextScan& s,
               const NodeArrays& a, std::uint64_t batch_records, std::uint64_t staging_capacity, RunContext& ctx)
      : bytes_(bytes), tagged_(tagged), s_(s), a_(a),
        batch_records_(batch_estimate(batch_records, staging_capacity / 2, size, n)),
        half_capacity_(staging_capacity / 2), ctx_(ctx), staged_(ctx, a.staging, staging_capacity) {}

  // The records of a piece of the plan's order (4-byte indices).
  void gather(const std::byte* piece, std::size_t piece_bytes) {
    const auto* order = reinterpret_cast<const std::uint32_t*>(piece);
    const std::uint64_t count = piece_bytes / sizeof(std::uint32_t);
    for (std::uint64_t first = 0; first < count;) {
      const std::uint64_t left = ctx_.output.records_left() - pending_records_;
      if (left == 0) break;
      first += gather_batch(order + first, std::min({batch_records_, count - first, left}));
    }
  }

  void flush() { write_pending(); }

 private:
  // Records per batch: about those that fill half the staging at the
  // node's mean length, a quarter more for the spread, so that the lengths
  // of records that do not fit are seldom looked up (and looked up again).
  static std::uint64_t batch_estimate(std::uint64_t batch_records, std::uint64_t half, std::uint64_t size,
                                      std::uint64_t n) {
    const std::uint64_t mean = std::max<std::uint64_t>(1, size / std::max<std::uint64_t>(1, n));
    return std::clamp<std::uint64_t>(half / mean + half / mean / 4 + 16, 1, batch_records);
  }

  std::uint64_t length_of(std::uint32_t e) const {
    return tagged_ ? a_.lengths[e] : s_.record_length(bytes_ + a_.offsets[e], a_.offsets[e + 1] - a_.offsets[e]);
  }

  void write_pending() {
    if (pending_records_ == 0) return;
    ctx_.output.write(pending_, pending_bytes_, pending_records_);
    ctx_.publish_progress();
    pending_records_ = pending_bytes_ = 0;
  }

  // Places the first records of the `m` at `batch`, as many as fit in half
  // the staging buffer (at least one), and writes the batch before; returns
  // how many.
  std::uint64_t gather_batch(const std::uint32_t* batch, std::uint64_t m) {
    std::uint64_t* batch_offsets = a_.batch_offsets;
#pragma omp parallel for schedule(static) num_threads(ctx_.threads) if (m >= tuning::kParallelGatherMin)
    for (std::uint64_t k = 0; k < m; ++k) batch_offsets[k] = length_of(batch[k]);
    // The records that fit in half the staging buffer go now, the rest next step.
    std::uint64_t total = 0, fit = 0;
    for (; fit < m && total + batch_offsets[fit] <= half_capacity_; ++fit) {
      total += std::exchange(batch_offsets[fit], total);
    }
    if (fit == 0) {  // a record larger than half the staging buffer, after those before it
      write_pending();
      staged_.record(bytes_ + a_.offsets[batch[0]], length_of(batch[0]));
      staged_.flush();
      return 1;
    }
    std::byte* half = a_.staging + (pending_ == a_.staging ? half_capacity_ : 0);
    // A parallel step costs a wake-up and a barrier: small batches (small
    // nodes, small budgets) are written and copied in turn, as before.
    const int threads = total >= kMinOverlappedBytes ? ctx_.threads : 1;
    std::exception_ptr failed;  // of the write (a closed pipe, a full disk): none may leave the region
#pragma omp parallel num_threads(threads) if (threads > 1)
    {
      const int thread = omp_get_thread_num(), threads = omp_get_num_threads();
      if (thread == 0) {
        try {
          write_pending();
        } catch (...) {
          failed = std::current_exception();
        }
      }
      if (threads == 1) {
        copy_share(batch, fit, total, half, 0, 1);
      } else if (thread > 0) {
        // Each copying thread takes an equal share of the bytes, not of the
        // records: with heavy-tailed lengths an equal count of records left
        // one thread copying the long ones while the others waited.
        const int parts = fit >= tuning::kParallelGatherMin ? threads - 1 : 1;
        if (thread - 1 < parts) copy_share(batch, fit, total, half, thread - 1, parts);
      }
    }
    if (failed) std::rethrow_exception(failed);
    pending_ = half;
    pending_bytes_ = total;
    pending_records_ = fit;
    return fit;
  }

  // Share `part` of `parts` of the `m` records' `total` bytes, copied to `to`.
  void copy_share(const std::uint32_t* batch, std::uint64_t m, std::uint64_t total, std::byte* to, int part,
                  int parts) const {
    const std::uint64_t* batch_offsets = a_.batch_offsets;
    const std::uint64_t k0 = byte_share_start(batch_offsets, m, total, part, parts);
    const std::uint64_t k1 = byte_share_start(batch_offsets, m, total, part + 1, parts);
    for (std::uint64_t k = k0; k < k1; ++k) {
      if (k + 8 < k1) __builtin_prefetch(bytes_ + a_.offsets[batch[k + 8]]);
      const std::uint64_t stop = k + 1 < m ? batch_offsets[k + 1] : total;
      std::memcpy(to + batch_offsets[k], bytes_ + a_.offsets[batch[k]], stop - batch_offsets[k]);
    }
  }

  const std::byte* bytes_;
  const bool tagged_;
  const TextScan& s_;
  const NodeArrays& a_;
  const std::uint64_t batch_records_, half_capacity_;
  RunContext& ctx_;
  StagedOutput staged_;
  const std::byte* pending_ = nullptr;  // the batch gathered and not yet written, in one half of the staging
  std::uint64_t pending_bytes_ = 0, pending_records_ = 0;
};

}  // namespace

std::uint64_t text_in_memory_workspace_bytes(std::uint64_t records, bool tagged, const TextOptions& o) {
  const ShuffleOptions index = index_options(o);
  const std::uint64_t places =
      tagged ? align_up(8 * records, 64) + align_up(4 * records, 64) : align_up(8 * (records + 1), 64);
  return places + align_up(4 * records, 64) + MemoryPlan::workspace_bytes(records, index, MemoryMode::kShuffle) +
         MemoryPlan::batch_bytes(records, index) + 8 * gather_batch_records(o.walk.run.memory_bytes) +
         staging_bytes(o.walk.run.memory_bytes);
}

void run_text_in_memory(const core::Node& node, const std::byte* bytes, std::uint64_t size, bool tagged,
                        const TextScan& s, std::byte* workspace, const TextOptions& o, RunContext& ctx) {
  const std::uint64_t n = node.records;
  const ShuffleOptions index = index_options(o);
  const std::uint64_t batch_records = gather_batch_records(o.walk.run.memory_bytes);
  const NodeArrays a = carve_node_arrays(n, tagged, index, batch_records, workspace);

  PhaseTimerExcluding shuffling(ctx.stats.seconds_shuffling, ctx.stats.seconds_writing);
  locate_records(bytes, size, n, tagged, s, o.syntax.terminator, a);
  // 2-3. The plan on the indices, each piece of its order gathered (4.) as
  // it comes.
  RecordGather gather(bytes, size, n, tagged, s, a, batch_records, staging_bytes(o.walk.run.memory_bytes), ctx);
  const EmitOutput emit = [&](const std::byte* piece, std::size_t piece_bytes) { gather.gather(piece, piece_bytes); };
  if (o.walk.run.device == device::Device::kCuda && n <= (std::uint64_t{1} << 32) &&
      device::node_fits_on_device(n, sizeof(std::uint32_t), o.walk.run.constants)) {
    // The order of the whole node from the GPU, handed on as it comes back.
    device::NodeOnDeviceOptions on_device;
    on_device.threads = ctx.threads;
    on_device.emit = emit;
    device::node_order_on_device(node, o.walk.run.seed, o.walk.run.constants, a.indices, on_device);
  } else {
    MemoryPlan plan(index, MemoryMode::kShuffle, a.plan_workspace, emit,
                    [&](std::uint64_t first) { return ctx.output.wanted(first); });
    IndexSource source(a.identity, MemoryPlan::batch_bytes(n, index) / 4);
    plan.run(node, source, reinterpret_cast<std::byte*>(a.indices));
  }
  gather.flush();
  ctx.stats.huge_page_bytes = std::max(ctx.stats.huge_page_bytes, device::huge_page_bytes());
}

}  // namespace extshuffle::ioperm
