#include "extshuffle/driver/external_executor.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <new>
#include <stdexcept>
#include <vector>

#include "extshuffle/core/matrix_row_sampler.hpp"
#include "extshuffle/core/variable_philox.hpp"
#include "extshuffle/device/host_memory.hpp"
#include "extshuffle/io/block_file.hpp"
#include "bucket_writer.hpp"
#include "executor_support.hpp"
#include "memory_executor.hpp"

namespace extshuffle::driver {
namespace {

constexpr std::uint64_t kMaxChunkGroup = 16;

// Does a node of n records run in RAM? It needs two buffers of n records
// (memory_executor.hpp) out of the budget.
std::uint64_t half_budget(const ExternalOptions& o) { return o.memory_bytes / 2 / 64 * 64; }
bool fits_in_memory(std::uint64_t n, const ExternalOptions& o) { return n * o.record_size <= half_budget(o); }

// Records so large that a chunk does not fit in memory are gathered by index
// (DESIGN.md 2.3): the chunk's permutation and its inverse (8 bytes a
// record), a read buffer that streams through the chunk, and an output window
// that receives the records whose shuffled positions it covers; one
// sequential pass over the chunk per window.
struct GatherLayout {
  std::uint64_t index_bytes = 0;
  std::uint64_t read_bytes = 0;
  std::uint64_t window_bytes = 0;
};

GatherLayout gather_layout(std::uint64_t records, std::size_t record_size, std::uint64_t budget) {
  GatherLayout g;
  g.index_bytes = align_up(records * 2 * sizeof(std::uint32_t), 64);
  const std::uint64_t left = budget > g.index_bytes ? budget - g.index_bytes : 0;
  g.read_bytes = std::max<std::uint64_t>(1, std::min<std::uint64_t>(left / 8 / record_size,
                                                                     (std::uint64_t{1} << 20) / record_size + 1)) *
                 record_size;
  g.window_bytes = align_down(left > g.read_bytes ? left - g.read_bytes : 0, record_size);
  if (g.window_bytes < record_size) throw BudgetError("--memory too small for the record size");
  return g;
}

// How a streaming node uses the budget. Bucket write buffers (two per bucket,
// so one is written while the other fills) take up to half; chunks take the
// rest: groups of whole chunks (read double-buffered, plus the shuffled copy)
// when three chunks fit, otherwise the windowed gather of gather_in_windows().
struct StreamLayout {
  bool gather_by_index = false;
  std::uint64_t group_chunks = 1;   // chunks read and shuffled together
  std::uint64_t group_bytes = 0;    // bytes of one group buffer
  GatherLayout gather;              // when gather_by_index
  std::uint64_t bucket_buffer = 0;  // bytes of one bucket buffer
};

StreamLayout stream_layout(std::uint64_t p, const ExternalOptions& o) {
  StreamLayout layout;
  const std::uint64_t chunk_bytes = o.constants.leaf_records * o.record_size;
  layout.bucket_buffer = bucket_buffer_bytes(o.memory_bytes / 2, p);
  const std::uint64_t chunk_budget = o.memory_bytes - 2 * p * layout.bucket_buffer;
  if (3 * chunk_bytes <= chunk_budget) {
    layout.group_chunks = std::min(kMaxChunkGroup, chunk_budget / (3 * chunk_bytes));
    layout.group_bytes = layout.group_chunks * chunk_bytes;
    return layout;
  }
  // Gathering: buckets get a quarter, the chunk's indices and window the rest.
  layout.gather_by_index = true;
  layout.bucket_buffer = bucket_buffer_bytes(o.memory_bytes / 4, p);
  layout.gather = gather_layout(o.constants.leaf_records, o.record_size,
                                o.memory_bytes - 2 * p * layout.bucket_buffer);
  return layout;
}

// Reads `bytes` at `offset` in pieces, all requested at once so that no
// single request is huge; wait_for(k) returns once the first k bytes are in.
class RegionReader {
 public:
  RegionReader(io::BlockFile& file, std::uint64_t offset, std::byte* to, std::uint64_t bytes) {
    for (std::uint64_t done = 0; done < bytes; done += kPiece) {
      pieces_.push_back(file.read(to + done, offset + done, std::min(kPiece, bytes - done)));
    }
  }
  void wait_for(std::uint64_t bytes) {
    for (; waited_ < pieces_.size() && waited_ * kPiece < bytes; ++waited_) pieces_[waited_].wait();
  }

 private:
  static constexpr std::uint64_t kPiece = std::uint64_t{64} << 20;
  std::vector<io::PendingIo> pieces_;
  std::size_t waited_ = 0;
};

class ExternalRun {
 public:
  ExternalRun(io::BlockFile& scratch, std::uint64_t scratch_offset, const ExternalOptions& options,
              const OutputSink& sink)
      : scratch_(scratch), scratch_top_(scratch_offset), o_(options), sink_(sink), limit_(options.output_records),
        memory_(device::allocate_host_memory(options.device, options.memory_bytes)), arena_(memory_.get()) {}

  // Runs `node`, whose input records lie at `offset` of `source`; returns the
  // number of disk passes on its deepest path.
  std::uint32_t run(const core::Node& node, io::BlockFile& source, std::uint64_t offset) {
    if (node.records == 0 || !wanted(node.id.first)) return 1;
    if (fits_in_memory(node.records, o_)) return run_in_memory(node, source, offset);
    if (core::is_leaf(node.records, o_.constants)) return run_leaf_by_index(node, source, offset);
    return run_streaming(node, source, offset);
  }

  ExternalStats stats;

 private:
  // Is output position `first` among those asked for (-n)?
  bool wanted(std::uint64_t first) const { return first < limit_; }

  // Hands output to the sink, cut at the -n limit.
  void emit_limited(const std::byte* data, std::uint64_t bytes) {
    const std::uint64_t left = limit_ - std::min(limit_, emitted_records_);
    const std::uint64_t take = std::min<std::uint64_t>(bytes / o_.record_size, left);
    if (take > 0) sink_(data, take * o_.record_size);
    emitted_records_ += take;
    stats.bytes_written += take * o_.record_size;
  }

  void publish_progress() {
    if (o_.progress_bytes) o_.progress_bytes->store(stats.bytes_read + stats.bytes_written, std::memory_order_relaxed);
  }

  std::uint32_t run_in_memory(const core::Node& node, io::BlockFile& source, std::uint64_t offset) {
    const std::uint64_t bytes = node.records * o_.record_size;
    std::byte* a = arena_;
    std::byte* b = arena_ + half_budget(o_);
    // The first chunks are shuffled while the rest is still being read.
    RegionReader reader(source, offset, a, bytes);
    stats.bytes_read += bytes;
    ++stats.nodes_in_memory;
    const auto t0 = Clock::now();
    double writing = 0, reading = 0;
    run_node_in_memory(
        node, a, b, o_,
        [&](const std::byte* data, std::size_t n) {
          const auto w0 = Clock::now();
          emit_limited(data, n);
          writing += since(w0);
          publish_progress();
        },
        [&](std::uint64_t records) {
          const auto r0 = Clock::now();
          reader.wait_for(records * o_.record_size);
          reading += since(r0);
        });
    reader.wait_for(bytes);
    stats.seconds_reading += reading;
    stats.seconds_writing += writing;
    stats.seconds_shuffling += since(t0) - writing - reading;
    return 1;
  }

  std::uint32_t run_streaming(const core::Node& node, io::BlockFile& source, std::uint64_t offset) {
    const core::PlanConstants& c = o_.constants;
    const std::size_t r = o_.record_size;
    const std::uint64_t n = node.records;
    const std::uint64_t p = core::bucket_count(n, c);
    const StreamLayout layout = stream_layout(p, o_);
    ++stats.nodes_on_disk;

    // The node's buckets occupy one scratch region, bucket j at its output
    // offset: the plan fixes every bucket's size in advance, so no allocator
    // is needed and each bucket is read back with one sequential read.
    const std::uint64_t region = scratch_top_;
    scratch_top_ += n * r;

    std::byte* cursor = arena_;
    std::byte* group_buffers[3] = {};
    if (!layout.gather_by_index) {
      for (auto& buffer : group_buffers) {
        buffer = cursor;
        cursor += layout.group_bytes;
      }
    } else {
      cursor += layout.gather.index_bytes + layout.gather.read_bytes + layout.gather.window_bytes;
    }
    std::vector<BucketWriter> writers;
    writers.reserve(p);
    for (std::uint64_t j = 0; j < p; ++j) {
      writers.emplace_back(scratch_, region + core::bucket_first(n, p, j) * r, core::bucket_records(n, p, j) * r,
                           nullptr, cursor, layout.bucket_buffer, wanted(node.id.first + core::bucket_first(n, p, j)));
      cursor += 2 * layout.bucket_buffer;
    }

    core::MatrixRowSampler sampler(o_.seed, node.id, n, c);
    std::vector<std::uint64_t> row(p);
    if (layout.gather_by_index) {
      scatter_by_index(node, source, offset, layout.gather, sampler, row, writers);
    } else {
      scatter_groups(node, source, offset, layout, sampler, row, writers, group_buffers);
    }
    auto t0 = Clock::now();
    for (auto& writer : writers) {
      writer.finish();
      stats.bytes_written += writer.take_unreported_bytes();
    }
    stats.seconds_writing += since(t0);
    writers.clear();

    // 4. Each bucket in turn; the last level writes the output in order.
    const std::uint32_t deepest = run_buckets(node, p, region);
    scratch_.discard(region, n * r);  // what -n left unread
    scratch_top_ = region;
    return deepest + 1;
  }

  // Consecutive buckets lie next to each other in scratch space, so those
  // that fit in a third of the budget together are read with one request,
  // the next group while this one is shuffled; the leaves of a group are
  // shuffled as one parallel batch. Larger buckets run on their own.
  std::uint32_t run_buckets(const core::Node& node, std::uint64_t p, std::uint64_t region) {
    const std::size_t r = o_.record_size;
    const std::uint64_t third = align_down(o_.memory_bytes / 3, 64);
    struct Group {
      std::uint64_t first, end;  // buckets [first, end)
      bool alone;                // too large to share: run() on its own
    };
    std::vector<Group> groups;
    for (std::uint64_t j = 0; j < p && wanted(node.id.first + core::bucket_first(node.records, p, j)); ++j) {
      const std::uint64_t bytes = core::bucket_records(node.records, p, j) * r;
      if (bytes > third) {
        groups.push_back({j, j + 1, true});
      } else if (groups.empty() || groups.back().alone ||
                 bucket_bytes(node, p, groups.back().first, j + 1) > third) {
        groups.push_back({j, j + 1, false});
      } else {
        groups.back().end = j + 1;
      }
    }
    std::byte* inputs[2] = {arena_, arena_ + third};
    std::byte* output = arena_ + 2 * third;
    auto offset_of = [&](std::uint64_t j) { return region + core::bucket_first(node.records, p, j) * r; };
    io::PendingIo next_read;
    auto start_read = [&](std::size_t g) {
      if (g >= groups.size() || groups[g].alone) return;
      const std::uint64_t bytes = bucket_bytes(node, p, groups[g].first, groups[g].end);
      next_read = scratch_.read(inputs[g % 2], offset_of(groups[g].first), bytes);
      stats.bytes_read += bytes;
    };
    std::uint32_t deepest = 1;
    start_read(0);
    for (std::size_t g = 0; g < groups.size(); ++g) {
      const Group& group = groups[g];
      if (group.alone) {
        deepest = std::max(deepest, run(core::bucket_node(node, p, group.first), scratch_, offset_of(group.first)));
        start_read(g + 1);
      } else {
        auto t0 = Clock::now();
        next_read.wait();
        stats.seconds_reading += since(t0);
        start_read(g + 1);
        run_group_in_memory(node, p, group.first, group.end, inputs[g % 2], output);
      }
      const std::uint64_t bytes = bucket_bytes(node, p, group.first, group.end);
      scratch_.discard(offset_of(group.first), bytes);
    }
    return deepest;
  }

  // Bytes of buckets [first, end) of `node`.
  std::uint64_t bucket_bytes(const core::Node& node, std::uint64_t p, std::uint64_t first, std::uint64_t end) const {
    return (core::bucket_first(node.records, p, end - 1) + core::bucket_records(node.records, p, end - 1) -
            core::bucket_first(node.records, p, first)) *
           o_.record_size;
  }

  // Buckets [first, end) of `node`, loaded at `input`; `output` is as large.
  // Runs of leaf buckets are shuffled in one batch, other buckets one by one
  // in RAM; outputs go to the sink in bucket order.
  void run_group_in_memory(const core::Node& node, std::uint64_t p, std::uint64_t first, std::uint64_t end,
                           std::byte* input, std::byte* output) {
    const std::size_t r = o_.record_size;
    const std::uint64_t base = core::bucket_first(node.records, p, first);
    std::vector<device::ShuffleJob> leaves;
    std::uint64_t pending_from = 0, pending_bytes = 0;  // output bytes of the batched leaves
    auto emit = [&](const std::byte* data, std::size_t n) {
      const auto t0 = Clock::now();
      emit_limited(data, n);
      stats.seconds_writing += since(t0);
      publish_progress();
    };
    auto flush_leaves = [&] {
      if (leaves.empty()) return;
      const auto t0 = Clock::now();
      device::shuffle_records(o_.device, leaves, r, o_.threads);
      stats.seconds_shuffling += since(t0);
      emit(output + pending_from, pending_bytes);
      leaves.clear();
      pending_bytes = 0;
    };
    for (std::uint64_t j = first; j < end; ++j) {
      const core::Node child = core::bucket_node(node, p, j);
      const std::uint64_t at = (core::bucket_first(node.records, p, j) - base) * r;
      ++stats.nodes_in_memory;
      if (core::is_leaf(child.records, o_.constants)) {
        if (leaves.empty()) pending_from = at;
        leaves.push_back({input + at, output + at, child.records,
                          core::shuffle_bijection(o_.seed, {child.id, core::Purpose::kLeafShuffle, 0}, child.records)});
        pending_bytes += child.records * r;
      } else {
        flush_leaves();
        const auto t0 = Clock::now();
        const double written_before = stats.seconds_writing;
        run_node_in_memory(child, input + at, output + at, o_, emit);
        stats.seconds_shuffling += since(t0) - (stats.seconds_writing - written_before);
      }
    }
    flush_leaves();
  }

  // A leaf whose records do not fit in memory, gathered in windows straight to the output.
  std::uint32_t run_leaf_by_index(const core::Node& node, io::BlockFile& source, std::uint64_t offset) {
    ++stats.nodes_in_memory;
    const GatherLayout g = gather_layout(node.records, o_.record_size, o_.memory_bytes);
    gather_in_windows(core::shuffle_bijection(o_.seed, {node.id, core::Purpose::kLeafShuffle, 0}, node.records),
                      node.records, source, offset, g, [&](const std::byte* data, std::uint64_t bytes) {
                        const auto t0 = Clock::now();
                        emit_limited(data, bytes);
                        stats.seconds_writing += since(t0);
                      });
    return 1;
  }

  // Hands the m records at `offset` of `source` to `emit` in the order of the
  // bijective shuffle `f`, using the arena as laid out by `g`: the inverse
  // permutation says where each record read goes, and each pass over the
  // records fills one window of consecutive output positions.
  template <class Emit>
  void gather_in_windows(const core::VariablePhilox& f, std::uint64_t m, io::BlockFile& source,
                         std::uint64_t offset, const GatherLayout& g, Emit&& emit) {
    const std::size_t r = o_.record_size;
    auto* permutation = reinterpret_cast<std::uint32_t*>(arena_);
    std::uint32_t* inverse = permutation + m;
    std::byte* read_buffer = arena_ + g.index_bytes;
    std::byte* window = read_buffer + g.read_bytes;
    auto t0 = Clock::now();
    for (std::uint32_t k = 0; k < m; ++k) inverse[k] = k;
    const device::ShuffleJob job{reinterpret_cast<const std::byte*>(inverse),
                                 reinterpret_cast<std::byte*>(permutation), m, f};
    device::shuffle_records(device::Device::kCpu, job, sizeof(std::uint32_t), o_.threads);
    for (std::uint32_t k = 0; k < m; ++k) inverse[permutation[k]] = k;
    stats.seconds_shuffling += since(t0);
    const std::uint64_t window_records = g.window_bytes / r;
    const std::uint64_t read_records = g.read_bytes / r;
    for (std::uint64_t first = 0; first < m; first += window_records) {
      const std::uint64_t end = std::min(m, first + window_records);
      for (std::uint64_t s0 = 0; s0 < m; s0 += read_records) {
        const std::uint64_t count = std::min(read_records, m - s0);
        t0 = Clock::now();
        source.read_now(read_buffer, offset + s0 * r, count * r);
        stats.bytes_read += count * r;
        stats.seconds_reading += since(t0);
        for (std::uint64_t e = 0; e < count; ++e) {
          const std::uint64_t k = inverse[s0 + e];
          if (k >= first && k < end) std::memcpy(window + (k - first) * r, read_buffer + e * r, r);
        }
      }
      emit(window, (end - first) * r);
      publish_progress();
    }
  }

  // Steps 1-3 of the split for chunks that fit in memory, G at a time: the
  // next group is read while this one is shuffled (in one parallel batch)
  // and scattered into the bucket writers.
  void scatter_groups(const core::Node& node, io::BlockFile& source, std::uint64_t offset,
                      const StreamLayout& layout, core::MatrixRowSampler& sampler,
                      std::vector<std::uint64_t>& row, std::vector<BucketWriter>& writers,
                      std::byte* const buffers[3]) {
    const core::PlanConstants& c = o_.constants;
    const std::size_t r = o_.record_size;
    const std::uint64_t n = node.records;
    const std::uint64_t chunks = core::chunk_count(n, c);
    const std::uint64_t groups = (chunks + layout.group_chunks - 1) / layout.group_chunks;
    auto group_range = [&](std::uint64_t g) {
      const std::uint64_t first_chunk = g * layout.group_chunks;
      const std::uint64_t last_chunk = std::min(chunks, first_chunk + layout.group_chunks);
      const std::uint64_t first = core::chunk_first(first_chunk, c);
      const std::uint64_t end = last_chunk == chunks ? n : core::chunk_first(last_chunk, c);
      return std::pair{first_chunk, std::pair{first, end}};
    };
    io::PendingIo next_read;
    auto start_read = [&](std::uint64_t g) {
      const auto [first_chunk, span] = group_range(g);
      (void)first_chunk;
      const std::uint64_t bytes = (span.second - span.first) * r;
      next_read = source.read(buffers[g % 2], offset + span.first * r, bytes);
      stats.bytes_read += bytes;
    };
    start_read(0);
    std::vector<device::ShuffleJob> jobs;
    const std::uint64_t p = row.size();
    const int threads = worker_threads(o_.threads);
    std::vector<std::uint64_t> slice_starts;  // per chunk of the group: where each bucket's slice starts
    for (std::uint64_t g = 0; g < groups; ++g) {
      auto t0 = Clock::now();
      next_read.wait();
      stats.seconds_reading += since(t0);
      if (g + 1 < groups) start_read(g + 1);
      const auto [first_chunk, span] = group_range(g);
      const std::byte* input = buffers[g % 2];
      std::byte* shuffled = buffers[2];
      // 2. Shuffle the group's chunks.
      t0 = Clock::now();
      jobs.clear();
      const std::uint64_t last_chunk = std::min(chunks, first_chunk + layout.group_chunks);
      for (std::uint64_t i = first_chunk; i < last_chunk; ++i) {
        const std::uint64_t at = (core::chunk_first(i, c) - span.first) * r;
        const std::uint64_t m = core::chunk_records(n, i, c);
        jobs.push_back({input + at, shuffled + at, m,
                        core::shuffle_bijection(o_.seed, {node.id, core::Purpose::kChunkShuffle, i}, m)});
      }
      device::shuffle_records(o_.device, jobs, r, o_.threads);
      stats.seconds_shuffling += since(t0);
      // 1 and 3. Sample each chunk's row, then append the chunks' slices to
      // the buckets, bucket ranges on all threads (a memory-bound copy).
      t0 = Clock::now();
      slice_starts.resize((last_chunk - first_chunk) * (p + 1));
      for (std::uint64_t i = first_chunk; i < last_chunk; ++i) {
        sampler.next_row(row);
        std::uint64_t* starts = slice_starts.data() + (i - first_chunk) * (p + 1);
        starts[0] = (core::chunk_first(i, c) - span.first) * r;
        for (std::uint64_t j = 0; j < p; ++j) starts[j + 1] = starts[j] + row[j] * r;
      }
      scatter_by_bucket_ranges(p, threads, [&](std::uint64_t j) {
        for (std::uint64_t i = first_chunk; i < last_chunk; ++i) {
          const std::uint64_t* starts = slice_starts.data() + (i - first_chunk) * (p + 1);
          writers[j].append(shuffled + starts[j], starts[j + 1] - starts[j]);
        }
      });
      stats.seconds_scattering += since(t0);
      report_bytes_written(writers, stats);
      publish_progress();
    }
  }

  // Steps 1-3 for records so large that a chunk does not fit: each chunk is
  // gathered in windows, and the shuffled stream is cut into the row's slices.
  void scatter_by_index(const core::Node& node, io::BlockFile& source, std::uint64_t offset,
                        const GatherLayout& g, core::MatrixRowSampler& sampler,
                        std::vector<std::uint64_t>& row, std::vector<BucketWriter>& writers) {
    const core::PlanConstants& c = o_.constants;
    const std::size_t r = o_.record_size;
    const std::uint64_t n = node.records;
    for (std::uint64_t i = 0; i < core::chunk_count(n, c); ++i) {
      const std::uint64_t m = core::chunk_records(n, i, c);
      sampler.next_row(row);
      std::size_t j = 0;
      std::uint64_t left_in_slice = row[0] * r;
      gather_in_windows(core::shuffle_bijection(o_.seed, {node.id, core::Purpose::kChunkShuffle, i}, m), m,
                        source, offset + core::chunk_first(i, c) * r, g,
                        [&](const std::byte* data, std::uint64_t bytes) {
                          const auto t0 = Clock::now();
                          while (bytes > 0) {
                            while (left_in_slice == 0) left_in_slice = row[++j] * r;
                            const std::uint64_t take = std::min(bytes, left_in_slice);
                            writers[j].append(data, take);
                            data += take;
                            bytes -= take;
                            left_in_slice -= take;
                          }
                          stats.seconds_scattering += since(t0);
                          report_bytes_written(writers, stats);
                        });
    }
  }

  io::BlockFile& scratch_;
  std::uint64_t scratch_top_;
  ExternalOptions o_;
  const OutputSink& sink_;
  std::uint64_t limit_;                // -n: output positions below this are emitted
  std::uint64_t emitted_records_ = 0;
  // One arena of exactly --memory bytes, pinned when the GPU shuffles, so
  // every buffer of the run is allocated (and first touched) once.
  device::HostMemory memory_;
  std::byte* arena_;
};

void check_options(const ExternalOptions& o) {
  if (o.record_size == 0) throw std::invalid_argument("record size must be positive");
  const std::uint64_t minimum = minimum_memory_bytes(o.constants, o.record_size);
  if (o.memory_bytes < minimum) {
    throw BudgetError("--memory must be at least " + std::to_string((minimum + 1023) >> 10) + "K");
  }
}

}  // namespace

std::uint64_t minimum_memory_bytes(const core::PlanConstants& constants, std::size_t record_size) {
  // Gathering by index holds a chunk's permutation and its inverse (8 bytes a
  // record) in three quarters of the budget, with room for a read buffer and
  // a window of at least one record each.
  return std::max(kMinMemoryBytes, (32 * constants.leaf_records + 8 * record_size + 256) / 3 + 4096);
}

Schedule plan_schedule(std::uint64_t records, const ExternalOptions& o) {
  check_options(o);
  Schedule s;
  s.levels = core::plan_levels(records, o.constants);
  // Walk one representative node per level: sizes within a level differ by
  // at most one record, so they share a fate (except at the exact boundary,
  // where the count below is an estimate).
  std::uint64_t n = records, nodes = 1;
  s.passes = 1;
  while (n > 0 && !fits_in_memory(n, o)) {
    if (core::is_leaf(n, o.constants)) {  // a leaf larger than memory: gathered in windows
      s.gather_by_index = true;
      break;
    }
    const std::uint64_t p = core::bucket_count(n, o.constants);
    s.nodes_on_disk += nodes;
    s.gather_by_index = s.gather_by_index || stream_layout(p, o).gather_by_index;
    s.bytes_read += records * o.record_size;
    s.bytes_written += records * o.record_size;
    n = core::bucket_records(n, p, 0);
    nodes *= p;
    ++s.passes;
  }
  s.nodes_in_memory = records == 0 ? 0 : nodes;
  s.bytes_read += records * o.record_size;
  s.bytes_written += records * o.record_size;
  return s;
}

ExternalStats shuffle_external(io::BlockFile& input, std::uint64_t input_offset, std::uint64_t records,
                               io::BlockFile& scratch, std::uint64_t scratch_offset,
                               const ExternalOptions& options, const OutputSink& sink) {
  check_options(options);
  core::check_plan(records, options.constants);
  // An input that fits needs an arena of twice its size, not the whole budget
  // (by default half of RAM, which --device cuda would pin). The layout of
  // memory never changes the permutation.
  ExternalOptions sized = options;
  if (fits_in_memory(records, options)) {
    sized.memory_bytes = std::max<std::uint64_t>(2 * align_up(records * options.record_size, 64), 128);
  }
  ExternalRun run(scratch, scratch_offset, sized, sink);
  run.stats.passes = run.run(core::Node{core::NodeId{0, 0}, records}, input, input_offset);
  return run.stats;
}

}  // namespace extshuffle::driver
