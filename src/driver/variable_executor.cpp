#include "extshuffle/driver/variable_executor.hpp"

#include <cstring>
#include <utility>
#include <string>
#include <vector>

#include "bucket_writer.hpp"
#include "executor_support.hpp"
#include "extshuffle/core/matrix_row_sampler.hpp"
#include "extshuffle/core/variable_philox.hpp"
#include "extshuffle/device/host_memory.hpp"
#include "extshuffle/driver/errors.hpp"
#include "extshuffle/formats/terminator_scan.hpp"
#include "extshuffle/io/block_file.hpp"
#include "memory_executor.hpp"
#include "node_stream.hpp"

namespace extshuffle::driver {
namespace {

constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;
constexpr std::uint64_t kMaxStaging = 64 * kMiB;
constexpr std::uint64_t kMaxChunkGroup = 8;
// Records gathered per parallel step of an in-memory node's output: large,
// because each step ends in a barrier, which costs a scheduler time slice
// when the machine is busy.
// Smaller batches are gathered by one thread: waking the others costs more.
constexpr std::uint64_t kParallelGatherMin = 32768;
// A 256th of the budget goes to the batch's offsets.
std::uint64_t gather_batch_records(std::uint64_t budget) {
  return std::clamp<std::uint64_t>(budget / 2048, 1024, std::uint64_t{1} << 18);
}
constexpr std::uint64_t kMinChunkSpace = 256 << 10;
// Record offsets within a chunk are 32-bit.
constexpr std::uint64_t kMaxChunkSpace = (std::uint64_t{4} << 30) - kIoAlign;
// A bucket's region holds its expected share of the node's bytes plus this
// slack; records beyond go to overflow extents. A bucket receives a uniform
// sample of the node's records (Gustedt, section 3), so its size deviates by
// about the record sizes' relative spread / sqrt(records): 1/32 and 64 KiB
// cover that except for inputs of a few enormous records.
constexpr std::uint64_t kRegionSlackDivisor = 32;
constexpr std::uint64_t kRegionSlackBytes = 64 << 10;

std::uint64_t staging_bytes(std::uint64_t budget) {
  return std::clamp<std::uint64_t>(align_down(budget / 16, 64), 4096, kMaxStaging);
}

// Memory of a node run in RAM: its bytes, record offsets (8 bytes each),
// the index permutation's two buffers (4 bytes each) and the output staging.
std::uint64_t in_memory_bytes(std::uint64_t records, std::uint64_t bytes, std::uint64_t budget) {
  return align_up(bytes, 64) + align_up(8 * (records + 1), 64) + 2 * align_up(4 * records, 64) +
         8 * gather_batch_records(budget) + staging_bytes(budget);
}

// Gathering a chunk in windows: record offsets and lengths, the permutation,
// its inverse, and the output offsets of a window's positions.
std::uint64_t gather_arrays_bytes(std::uint64_t leaf_records) {
  const std::uint64_t m = leaf_records;
  return 2 * align_up(8 * (m + 1), 64) + align_up(8 * m, 64) + 2 * align_up(4 * m, 64);
}

// Shuffling G chunks at once: one identity array, and per chunk the
// permutation and the record offsets (4 bytes each).
std::uint64_t group_arrays_bytes(std::uint64_t leaf_records, std::uint64_t group) {
  return align_up(4 * leaf_records, 64) + align_up(group * 4 * (2 * leaf_records + 1), 64);
}

// How a streaming node uses the budget: bucket buffers take half (as for
// fixed-size records); the other half holds the index arrays and the chunk
// space, into which the node's bytes are read ahead while earlier chunks
// are shuffled and scattered.
struct StreamLayout {
  std::uint64_t bucket_buffer = 0;
  std::uint64_t group_chunks = 1;
  std::uint64_t arrays_bytes = 0;
  std::uint64_t space_bytes = 0;
};

StreamLayout stream_layout(std::uint64_t p, const core::PlanConstants& c, std::uint64_t budget) {
  StreamLayout s;
  s.bucket_buffer = bucket_buffer_bytes(budget / 2, p);
  const std::uint64_t left = budget - 2 * p * s.bucket_buffer;
  const std::uint64_t per_chunk = 8 * c.leaf_records + 4;
  s.group_chunks = std::clamp<std::uint64_t>(left / 4 / per_chunk, 1, kMaxChunkGroup);
  s.arrays_bytes = std::max(group_arrays_bytes(c.leaf_records, s.group_chunks), gather_arrays_bytes(c.leaf_records));
  if (left < s.arrays_bytes + kMinChunkSpace) throw BudgetError("--memory too small for line records");
  s.space_bytes = std::min(align_down(left - s.arrays_bytes, 64), kMaxChunkSpace);
  return s;
}

template <class T>
T* carve(std::byte*& cursor, std::uint64_t count) {
  T* at = reinterpret_cast<T*>(cursor);
  cursor += align_up(count * sizeof(T), 64);
  return at;
}

std::string records_changed_message(std::uint64_t expected) {
  return "input changed during the run: it no longer holds the " + std::to_string(expected) +
         " records counted at the start";
}

class VariableRun {
 public:
  VariableRun(io::BlockFile& scratch, std::uint64_t scratch_offset, const VariableOptions& options,
              const OutputSink& sink)
      : scratch_(scratch), scratch_top_(scratch_offset), o_(options), sink_(sink), limit_(options.output_records),
        memory_(device::allocate_host_memory(options.device, options.memory_bytes)), arena_(memory_.get()) {}

  // Runs `node` on the records in `data`. At the root, blank records are
  // skipped when --skip-empty asks for it (`filter_blank`).
  void run(const core::Node& node, const NodeBytes& data, bool filter_blank) {
    if (node.records == 0 || !wanted(node.id.first)) return;
    if (fits_in_memory(node.records, data.bytes, o_.memory_bytes)) return run_in_memory(node, data, filter_blank);
    if (core::is_leaf(node.records, o_.constants)) return run_leaf_in_windows(node, data, filter_blank);
    run_streaming(node, data, filter_blank);
  }

  static bool fits_in_memory(std::uint64_t records, std::uint64_t bytes, std::uint64_t budget) {
    return records < (std::uint64_t{1} << 32) && in_memory_bytes(records, bytes, budget) <= budget;
  }

  ExternalStats stats;

 private:
  bool wanted(std::uint64_t first) const { return first < limit_; }

  void publish_progress() {
    if (o_.progress_bytes) o_.progress_bytes->store(stats.bytes_read + stats.bytes_written, std::memory_order_relaxed);
  }

  // The bytes of a record that starts at `begin`, `span` bytes before the
  // next one: with blank records skipped, the span also covers the blank
  // records that followed it, and the record ends at its own terminator.
  std::uint64_t record_length(const std::byte* begin, std::uint64_t span, bool filter_blank) const {
    if (!filter_blank) return span;
    const char* at = reinterpret_cast<const char*>(begin);
    return static_cast<std::uint64_t>(formats::scan_record(at, at + span, o_.syntax).end - at);
  }

  // Records end at every terminator: found in bulk (terminator_scan.hpp).
  bool plain_terminators(bool filter_blank) const { return !o_.syntax.quoted && !filter_blank; }

  // Finds the record at `at` in [at, end): its end, or nullptr when
  // incomplete. Skips blank records first when filtering.
  const std::byte* next_record(const std::byte*& at, const std::byte* end, bool filter_blank) const {
    for (;;) {
      const char* begin = reinterpret_cast<const char*>(at);
      const char* stop = formats::scan_record(begin, reinterpret_cast<const char*>(end), o_.syntax).end;
      if (!stop) return nullptr;
      if (!filter_blank || !formats::is_blank_record(begin, stop)) return reinterpret_cast<const std::byte*>(stop);
      at = reinterpret_cast<const std::byte*>(stop);
    }
  }

  // Output, cut at the -n limit.
  class Emitter {
   public:
    Emitter(VariableRun& run, std::byte* staging, std::uint64_t capacity)
        : run_(run), staging_(staging), capacity_(capacity) {}
    bool done() const { return run_.emitted_records_ >= run_.limit_; }
    void record(const std::byte* data, std::uint64_t bytes) {
      if (done()) return;
      ++run_.emitted_records_;
      if (bytes > capacity_ - fill_) flush();
      if (bytes > capacity_) {
        run_.write_out(data, bytes);
        return;
      }
      std::memcpy(staging_ + fill_, data, bytes);
      fill_ += bytes;
    }
    void flush() {
      if (fill_ > 0) run_.write_out(staging_, fill_);
      fill_ = 0;
    }

   private:
    VariableRun& run_;
    std::byte* staging_;
    std::uint64_t capacity_;
    std::uint64_t fill_ = 0;
  };

  void write_out(const std::byte* data, std::uint64_t bytes) {
    const auto t0 = Clock::now();
    sink_(data, bytes);
    stats.bytes_written += bytes;
    stats.seconds_writing += since(t0);
    publish_progress();
  }

  // 2.3, a node that fits: read it, find its records, shuffle their indices
  // with the plan (memory_executor.hpp) and gather the records in that order.
  void run_in_memory(const core::Node& node, const NodeBytes& data, bool filter_blank) {
    const std::uint64_t n = node.records;
    ++stats.nodes_in_memory;
    std::byte* cursor = arena_;
    std::byte* bytes = carve<std::byte>(cursor, data.bytes);
    auto* offsets = carve<std::uint64_t>(cursor, n + 1);
    auto* a = carve<std::uint32_t>(cursor, n);
    auto* b = carve<std::uint32_t>(cursor, n);
    const std::uint64_t batch_records = gather_batch_records(o_.memory_bytes);
    auto* batch_offsets = carve<std::uint64_t>(cursor, batch_records);
    std::byte* staging = cursor;
    auto t0 = Clock::now();
    NodeReader(data).read_now(bytes, data.bytes);
    stats.bytes_read += data.bytes;
    stats.seconds_reading += since(t0);

    t0 = Clock::now();
    const std::byte* at = bytes;
    const std::byte* end = bytes + data.bytes;
    if (plain_terminators(filter_blank)) {
      offsets[0] = 0;
      const auto* text = reinterpret_cast<const char*>(bytes);
      if (formats::find_record_ends(text, text + data.bytes, o_.syntax.terminator, n, offsets + 1) < n) {
        throw InputError(records_changed_message(n));
      }
      at = bytes + offsets[n];
    } else {
      for (std::uint64_t k = 0; k < n; ++k) {
        const std::byte* stop = next_record(at, end, filter_blank);
        if (!stop) throw InputError(records_changed_message(n));
        offsets[k] = static_cast<std::uint64_t>(at - bytes);
        at = stop;
      }
    }
    if (at != end && (!filter_blank || next_record(at, end, true))) throw InputError(records_changed_message(n));
    offsets[n] = data.bytes;
    for (std::uint32_t k = 0; k < n; ++k) a[k] = k;

    ShuffleOptions index_options = o_;
    index_options.record_size = sizeof(std::uint32_t);
    const std::uint64_t staging_capacity = staging_bytes(o_.memory_bytes);
    Emitter emitter(*this, staging, staging_capacity);
    const int threads = worker_threads(o_.threads);
    double writing_before = stats.seconds_writing;
    // The gather is random access into the node's bytes, bound by memory
    // latency: batches of records are placed by a prefix sum of their
    // lengths and copied by all threads.
    run_node_in_memory(
        node, reinterpret_cast<std::byte*>(a), reinterpret_cast<std::byte*>(b), index_options,
        [&](const std::byte* piece, std::size_t piece_bytes) {
          const auto* indices = reinterpret_cast<const std::uint32_t*>(piece);
          const std::uint64_t count = piece_bytes / sizeof(std::uint32_t);
          auto length_of = [&](std::uint32_t e) {
            return record_length(bytes + offsets[e], offsets[e + 1] - offsets[e], filter_blank);
          };
          for (std::uint64_t first = 0; first < count && !emitter.done();) {
            std::uint64_t m = std::min({batch_records, count - first, limit_ - emitted_records_});
            const std::uint32_t* batch = indices + first;
#pragma omp parallel for schedule(static) num_threads(threads) if (m >= kParallelGatherMin)
            for (std::uint64_t k = 0; k < m; ++k) batch_offsets[k] = length_of(batch[k]);
            // The records that fit in the staging buffer go now, the rest next step.
            std::uint64_t total = 0, fit = 0;
            for (; fit < m && total + batch_offsets[fit] <= staging_capacity; ++fit) {
              total += std::exchange(batch_offsets[fit], total);
            }
            if (fit == 0) {  // a record larger than the staging buffer
              emitter.record(bytes + offsets[batch[0]], length_of(batch[0]));
              emitter.flush();
              ++first;
              continue;
            }
            m = fit;
#pragma omp parallel for schedule(static) num_threads(threads) if (m >= kParallelGatherMin)
            for (std::uint64_t k = 0; k < m; ++k) {
              if (k + 8 < m) __builtin_prefetch(bytes + offsets[batch[k + 8]]);
              const std::uint64_t end = k + 1 < m ? batch_offsets[k + 1] : total;
              std::memcpy(staging + batch_offsets[k], bytes + offsets[batch[k]], end - batch_offsets[k]);
            }
            emitted_records_ += m;
            first += m;
            write_out(staging, total);
          }
        });
    emitter.flush();
    stats.seconds_shuffling += since(t0) - (stats.seconds_writing - writing_before);
  }

  // The records of one chunk (or leaf) too large for memory, in shuffled
  // order, window by window (DESIGN.md 2.3, "gathered by index"): `on_window`
  // receives positions [k0, k1) of the shuffled chunk as contiguous bytes,
  // with `position_offsets[k - k0]` the offset of position k. Returns the
  // stream position where the chunk ends.
  template <class OnWindow>
  std::uint64_t gather_in_windows(const NodeBytes& data, std::uint64_t start, std::uint64_t m,
                                  const core::VariablePhilox& f, bool filter_blank, std::byte* arrays,
                                  std::byte* space, std::uint64_t space_bytes, OnWindow&& on_window) {
    std::byte* cursor = arrays;
    auto* offsets = carve<std::uint64_t>(cursor, m + 1);
    auto* lengths = carve<std::uint64_t>(cursor, m);
    auto* permutation = carve<std::uint32_t>(cursor, m);
    auto* inverse = carve<std::uint32_t>(cursor, m);
    auto* position_offsets = carve<std::uint64_t>(cursor, m + 1);
    const std::uint64_t piece_bytes = std::min<std::uint64_t>(align_down(space_bytes / 4, 64), 16 * kMiB);
    std::byte* window = space + piece_bytes;
    const std::uint64_t window_bytes = space_bytes - piece_bytes;
    NodeReader reader(data);

    // 1. Find the chunk's records, streaming through it.
    auto t0 = Clock::now();
    reader.seek(start);
    std::uint64_t buffer_position = start, fill = 0, k = 0;
    const std::byte* at = space;
    while (k < m) {
      const std::byte* stop = next_record(at, space + fill, filter_blank);
      if (stop) {
        offsets[k] = buffer_position + static_cast<std::uint64_t>(at - space);
        lengths[k] = static_cast<std::uint64_t>(stop - at);
        at = stop;
        ++k;
        continue;
      }
      const std::uint64_t kept = static_cast<std::uint64_t>(space + fill - at);
      if (kept == space_bytes) throw_record_too_large(kept);
      if (reader.at_end()) throw InputError(records_changed_message(m));
      std::memmove(space, at, kept);
      buffer_position += static_cast<std::uint64_t>(at - space);
      fill = kept;
      at = space;
      const std::uint64_t got = reader.read_now(space + fill, space_bytes - fill);
      fill += got;
      stats.bytes_read += got;
    }
    const std::uint64_t chunk_end = offsets[m - 1] + lengths[m - 1];
    stats.seconds_reading += since(t0);

    // 2. The chunk's permutation and its inverse.
    t0 = Clock::now();
    for (std::uint32_t e = 0; e < m; ++e) inverse[e] = e;
    device::shuffle_records(device::Device::kCpu,
                            device::ShuffleJob{reinterpret_cast<const std::byte*>(inverse),
                                               reinterpret_cast<std::byte*>(permutation), m, f},
                            sizeof(std::uint32_t), o_.threads);
    for (std::uint32_t p = 0; p < m; ++p) inverse[permutation[p]] = p;
    stats.seconds_shuffling += since(t0);

    // 3. Each window of consecutive positions takes one pass over the chunk.
    for (std::uint64_t k0 = 0; k0 < m;) {
      std::uint64_t k1 = k0;
      position_offsets[0] = 0;
      while (k1 < m && position_offsets[k1 - k0] + lengths[permutation[k1]] <= window_bytes) {
        position_offsets[k1 - k0 + 1] = position_offsets[k1 - k0] + lengths[permutation[k1]];
        ++k1;
      }
      if (k1 == k0) throw_record_too_large(lengths[permutation[k0]]);
      t0 = Clock::now();
      reader.seek(offsets[0]);
      std::uint64_t e = 0;
      for (std::uint64_t q0 = offsets[0]; q0 < chunk_end;) {
        const std::uint64_t got = reader.read_now(space, std::min(piece_bytes, chunk_end - q0));
        stats.bytes_read += got;
        const std::uint64_t q1 = q0 + got;
        while (e < m && offsets[e] < q1) {
          const std::uint64_t a = offsets[e], b = a + lengths[e], p = inverse[e];
          if (p >= k0 && p < k1) {
            const std::uint64_t lo = std::max(a, q0), hi = std::min(b, q1);
            if (lo < hi) std::memcpy(window + position_offsets[p - k0] + (lo - a), space + (lo - q0), hi - lo);
          }
          if (b > q1) break;
          ++e;
        }
        q0 = q1;
      }
      stats.seconds_reading += since(t0);
      on_window(window, k0, k1, position_offsets);
      publish_progress();
      k0 = k1;
    }
    return chunk_end;
  }

  [[noreturn]] void throw_record_too_large(std::uint64_t bytes) const {
    throw InputError("a record of at least " + std::to_string(bytes) + " bytes does not fit in what --memory " +
                     std::to_string(o_.memory_bytes) + " leaves for one record: raise --memory");
  }

  // A leaf whose records do not fit in memory: gathered in windows straight to the output.
  void run_leaf_in_windows(const core::Node& node, const NodeBytes& data, bool filter_blank) {
    ++stats.nodes_in_memory;
    const std::uint64_t arrays = gather_arrays_bytes(node.records);
    const std::uint64_t space_bytes = std::min(align_down(o_.memory_bytes - arrays, 64), kMaxChunkSpace);
    gather_in_windows(data, 0, node.records,
                      core::shuffle_bijection(o_.seed, {node.id, core::Purpose::kLeafShuffle, 0}, node.records),
                      filter_blank, arena_, arena_ + arrays, space_bytes,
                      [&](const std::byte* window, std::uint64_t k0, std::uint64_t k1, const std::uint64_t* offsets) {
                        const std::uint64_t left = limit_ - std::min(limit_, emitted_records_);
                        const std::uint64_t take = std::min(k1 - k0, left);
                        if (take > 0) write_out(window, offsets[take]);
                        emitted_records_ += take;
                      });
  }

  // 2.1 and 2.3, a node too large for memory: steps 1-3 stream its chunks
  // into the buckets' scratch space, step 4 runs each bucket.
  void run_streaming(const core::Node& node, const NodeBytes& data, bool filter_blank) {
    const core::PlanConstants& c = o_.constants;
    const std::uint64_t n = node.records;
    const std::uint64_t p = core::bucket_count(n, c);
    const std::uint64_t chunks = core::chunk_count(n, c);
    const StreamLayout layout = stream_layout(p, c, o_.memory_bytes);
    ++stats.nodes_on_disk;

    std::byte* cursor = arena_;
    std::byte* space = carve<std::byte>(cursor, layout.space_bytes);
    std::byte* arrays = carve<std::byte>(cursor, layout.arrays_bytes);
    const std::uint64_t region = scratch_top_;
    std::uint64_t top = region;
    std::vector<std::uint64_t> region_offsets(p);
    for (std::uint64_t j = 0; j < p; ++j) {
      const auto expected = static_cast<std::uint64_t>(static_cast<unsigned __int128>(data.bytes) *
                                                       core::bucket_records(n, p, j) / n);
      region_offsets[j] = top;
      top += align_up(expected + expected / kRegionSlackDivisor + kRegionSlackBytes, kIoAlign);
    }
    std::atomic<std::uint64_t> overflow_top = top;
    std::vector<BucketWriter> writers;
    writers.reserve(p);
    for (std::uint64_t j = 0; j < p; ++j) {
      const std::uint64_t end = j + 1 < p ? region_offsets[j + 1] : top;
      writers.emplace_back(scratch_, region_offsets[j], end - region_offsets[j], &overflow_top, cursor,
                           layout.bucket_buffer, wanted(node.id.first + core::bucket_first(n, p, j)));
      cursor += 2 * layout.bucket_buffer;
    }

    core::MatrixRowSampler sampler(o_.seed, node.id, n, c);
    std::vector<std::uint64_t> row(p);
    auto* identity = reinterpret_cast<std::uint32_t*>(arrays);
    bool identity_ready = false;
    struct GroupChunk {
      const std::byte* base;
      std::uint64_t m;
      std::uint32_t* offsets;
      std::uint32_t* permutation;
    };
    std::vector<GroupChunk> group;
    std::vector<device::ShuffleJob> jobs;
    std::vector<std::uint64_t> slice_starts;  // per chunk of the group: where each bucket's slice starts
    const int threads = worker_threads(o_.threads);

    NodeReader reader(data);
    const std::uint64_t space_bytes = layout.space_bytes;
    std::uint64_t fill = 0, begin = 0, buffer_position = 0;
    bool reading = false;
    auto start_read = [&] {
      if (!reading && !reader.at_end() && fill < space_bytes) {
        reader.start(space + fill, space_bytes - fill);
        reading = true;
      }
    };
    auto finish_read = [&] {
      if (!reading) return;
      const auto t0 = Clock::now();
      const std::uint64_t got = reader.finish();
      fill += got;
      stats.bytes_read += got;
      stats.seconds_reading += since(t0);
      reading = false;
    };
    auto compact = [&] {
      std::memmove(space, space + begin, fill - begin);
      buffer_position += begin;
      fill -= begin;
      begin = 0;
    };

    start_read();
    for (std::uint64_t i = 0; i < chunks;) {
      finish_read();
      if (begin > 0 && (begin >= space_bytes / 2 || fill == space_bytes)) compact();
      // Find the records of up to G whole chunks in what has been read.
      group.clear();
      const std::byte* at = space + begin;
      for (std::uint64_t g = 0; g < layout.group_chunks && i + g < chunks; ++g) {
        const std::uint64_t m = core::chunk_records(n, i + g, c);
        auto* offsets = reinterpret_cast<std::uint32_t*>(arrays + align_up(4 * c.leaf_records, 64)) +
                        g * (2 * c.leaf_records + 1);
        const std::byte* walk = at;
        const std::byte* base = nullptr;
        std::uint64_t k = 0;
        if (plain_terminators(filter_blank)) {
          const auto* text = reinterpret_cast<const char*>(at);
          offsets[0] = 0;
          k = formats::find_record_ends(text, reinterpret_cast<const char*>(space + fill), o_.syntax.terminator, m,
                                        offsets + 1);
          base = at;
          walk = at + (k > 0 ? offsets[k] : 0);
        } else {
          for (; k < m; ++k) {
            const std::byte* stop = next_record(walk, space + fill, filter_blank);
            if (!stop) break;
            if (k == 0) base = walk;
            offsets[k] = static_cast<std::uint32_t>(walk - base);
            walk = stop;
          }
        }
        if (k < m) break;
        offsets[m] = static_cast<std::uint32_t>(walk - base);
        group.push_back({base, m, offsets, offsets + c.leaf_records + 1});
        at = walk;
      }
      if (group.empty()) {
        if (reader.at_end()) throw InputError(records_changed_message(n));
        if (begin == 0 && fill == space_bytes) {
          // A chunk larger than the chunk space: gathered in windows.
          const std::uint64_t m = core::chunk_records(n, i, c);
          std::uint64_t slice = 0, left_in_slice = 0;
          sampler.next_row(row);
          const std::uint64_t chunk_end = gather_in_windows(
              data, buffer_position, m, core::shuffle_bijection(o_.seed, {node.id, core::Purpose::kChunkShuffle, i}, m),
              filter_blank, arrays, space, space_bytes,
              [&](const std::byte* window, std::uint64_t k0, std::uint64_t k1, const std::uint64_t* offsets) {
                const auto t0 = Clock::now();
                for (std::uint64_t k = k0; k < k1;) {
                  while (left_in_slice == 0) left_in_slice = row[slice++];
                  const std::uint64_t take = std::min(left_in_slice, k1 - k);
                  writers[slice - 1].append(window + offsets[k - k0], offsets[k + take - k0] - offsets[k - k0]);
                  k += take;
                  left_in_slice -= take;
                }
                stats.seconds_scattering += since(t0);
                report_bytes_written(writers, stats);
              });
          identity_ready = false;  // the gather reused the arrays
          reader.seek(chunk_end);
          buffer_position = chunk_end;
          fill = begin = 0;
          ++i;
        } else if (begin > 0) {
          compact();
        }
        start_read();
        continue;
      }
      // Read ahead into the free space while this group is shuffled and scattered.
      start_read();
      // 2. Shuffle the group's record indices, in one parallel batch.
      auto t0 = Clock::now();
      if (!identity_ready) {
        for (std::uint32_t k = 0; k < c.leaf_records; ++k) identity[k] = k;
        identity_ready = true;
      }
      jobs.clear();
      for (std::uint64_t g = 0; g < group.size(); ++g) {
        jobs.push_back({reinterpret_cast<const std::byte*>(identity), reinterpret_cast<std::byte*>(group[g].permutation),
                        group[g].m,
                        core::shuffle_bijection(o_.seed, {node.id, core::Purpose::kChunkShuffle, i + g}, group[g].m)});
      }
      device::shuffle_records(o_.device, jobs, sizeof(std::uint32_t), o_.threads);
      stats.seconds_shuffling += since(t0);
      // 1 and 3. Each chunk's row of the matrix, then the chunks' records
      // appended to the buckets, bucket ranges on all threads.
      t0 = Clock::now();
      slice_starts.resize(group.size() * (p + 1));
      for (std::uint64_t g = 0; g < group.size(); ++g) {
        sampler.next_row(row);
        std::uint64_t* starts = slice_starts.data() + g * (p + 1);
        starts[0] = 0;
        for (std::uint64_t j = 0; j < p; ++j) starts[j + 1] = starts[j] + row[j];
      }
      scatter_by_bucket_ranges(p, threads, [&](std::uint64_t j) {
        BucketWriter& writer = writers[j];
        for (std::uint64_t g = 0; g < group.size(); ++g) {
          const GroupChunk& chunk = group[g];
          const std::uint64_t end = slice_starts[g * (p + 1) + j + 1];
          for (std::uint64_t k = slice_starts[g * (p + 1) + j]; k < end; ++k) {
            if (k + 16 < end) __builtin_prefetch(chunk.base + chunk.offsets[chunk.permutation[k + 16]]);
            const std::uint32_t e = chunk.permutation[k];
            const std::byte* record = chunk.base + chunk.offsets[e];
            writer.append(record, record_length(record, chunk.offsets[e + 1] - chunk.offsets[e], filter_blank));
          }
        }
      });
      stats.seconds_scattering += since(t0);
      report_bytes_written(writers, stats);
      begin = static_cast<std::uint64_t>(at - space);
      i += group.size();
      publish_progress();
    }
    finish_read();
    check_nothing_left(reader, space, space_bytes, space + begin, space + fill, filter_blank, n);
    auto t0 = Clock::now();
    std::vector<NodeBytes> buckets;
    buckets.reserve(p);
    for (auto& writer : writers) {
      writer.finish();
      stats.bytes_written += writer.take_unreported_bytes();
      buckets.push_back(writer.stored());
    }
    writers.clear();
    stats.seconds_writing += since(t0);

    // 4. Each bucket in turn, above this node's scratch space.
    scratch_top_ = overflow_top;
    for (std::uint64_t j = 0; j < p && wanted(node.id.first + core::bucket_first(n, p, j)); ++j) {
      run(core::bucket_node(node, p, j), buckets[j], false);
      // Its bytes are spent: drop them from the page cache and the disk now,
      // while they may still be dirty, rather than all at the end.
      for (const Extent& extent : buckets[j].extents) {
        if (extent.file == &scratch_) scratch_.discard(extent.offset, extent.bytes);
      }
    }
    scratch_.discard(region, overflow_top - region);
    scratch_top_ = region;
  }

  // After the node's last record only blank records (when skipped) may follow.
  void check_nothing_left(NodeReader& reader, std::byte* space, std::uint64_t space_bytes, const std::byte* at,
                          const std::byte* end, bool filter_blank, std::uint64_t n) {
    for (;;) {
      if (at != end) {
        if (!filter_blank) throw InputError(records_changed_message(n));
        if (next_record(at, end, true) || at != end) throw InputError(records_changed_message(n));
      }
      if (reader.at_end()) return;
      const std::uint64_t got = reader.read_now(space, space_bytes);
      at = space;
      end = space + got;
    }
  }

  io::BlockFile& scratch_;
  std::uint64_t scratch_top_;
  VariableOptions o_;
  const OutputSink& sink_;
  std::uint64_t limit_;
  std::uint64_t emitted_records_ = 0;
  device::HostMemory memory_;
  std::byte* arena_;
};

}  // namespace

std::uint64_t minimum_memory_bytes_variable(const core::PlanConstants& c) {
  // The streaming layout at full fanout: bucket buffers of 4 KiB in one
  // half; the index arrays and a minimal chunk space in the other.
  const std::uint64_t half = std::max(2 * c.max_fanout * kIoAlign,
                                      gather_arrays_bytes(c.leaf_records) + kMinChunkSpace + kIoAlign);
  return std::max(kMinMemoryBytes, 2 * half);
}

Schedule plan_schedule_variable(std::uint64_t records, std::uint64_t bytes, const VariableOptions& o) {
  Schedule s;
  s.levels = core::plan_levels(records, o.constants);
  std::uint64_t n = records, node_bytes = bytes, nodes = 1;
  s.passes = 1;
  while (n > 0 && !VariableRun::fits_in_memory(n, node_bytes, o.memory_bytes)) {
    if (core::is_leaf(n, o.constants)) {
      s.gather_by_index = true;
      break;
    }
    const std::uint64_t p = core::bucket_count(n, o.constants);
    s.nodes_on_disk += nodes;
    s.bytes_read += bytes;
    s.bytes_written += bytes;
    const std::uint64_t child = core::bucket_records(n, p, 0);
    node_bytes = static_cast<std::uint64_t>(static_cast<unsigned __int128>(node_bytes) * child / n);
    n = child;
    nodes *= p;
    ++s.passes;
  }
  s.nodes_in_memory = records == 0 ? 0 : nodes;
  s.bytes_read += bytes;
  s.bytes_written += bytes;
  return s;
}

ExternalStats shuffle_variable(const TextInput& input, std::uint64_t records, io::BlockFile& scratch,
                               std::uint64_t scratch_offset, const VariableOptions& options, const OutputSink& sink) {
  core::check_plan(records, options.constants);
  const std::uint64_t input_bytes = input.bytes + (input.add_terminator ? 1 : 0);
  if (!VariableRun::fits_in_memory(records, input_bytes, options.memory_bytes) &&
      options.memory_bytes < minimum_memory_bytes_variable(options.constants)) {
    throw BudgetError("--memory must be at least " +
                                std::to_string((minimum_memory_bytes_variable(options.constants) + 1023) >> 10) +
                                "K for line records");
  }
  NodeBytes data;
  data.append({input.file, input.offset, input.bytes});
  static const std::byte kTerminators[2] = {std::byte{'\n'}, std::byte{'\0'}};
  if (input.add_terminator) data.append({nullptr, 0, 1, &kTerminators[options.syntax.terminator == '\n' ? 0 : 1]});
  // An input that fits needs an arena of its size, not the whole budget.
  VariableOptions sized = options;
  const std::uint64_t needed = in_memory_bytes(records, data.bytes, options.memory_bytes);
  if (VariableRun::fits_in_memory(records, data.bytes, options.memory_bytes)) sized.memory_bytes = needed;
  VariableRun run(scratch, scratch_offset, sized, sink);
  const Schedule schedule = plan_schedule_variable(records, data.bytes, options);
  run.run(core::Node{core::NodeId{0, 0}, records}, data, options.skip_blank);
  run.stats.passes = schedule.passes;
  return run.stats;
}

}  // namespace extshuffle::driver
