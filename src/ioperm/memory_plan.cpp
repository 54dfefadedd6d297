#include "memory_plan.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <vector>

#include "walk_support.hpp"
#include "extshuffle/ioperm/phase_timer.hpp"
#include "extshuffle/core/recursive_matrix.hpp"
#include "extshuffle/core/variable_philox.hpp"
#include "extshuffle/device/permutation_indices.hpp"
#include "matrix_rows.hpp"
#include "tuning.hpp"

namespace extshuffle::ioperm {

const std::byte* IndexSource::records(std::uint64_t first, std::uint64_t count) {
  std::iota(buffer_, buffer_ + std::min(count, capacity_), static_cast<std::uint32_t>(first));
  return reinterpret_cast<const std::byte*>(buffer_);
}

bool MemoryPlan::shuffles_chunks(const ShuffleOptions& o) {
  return o.run.constants.leaf_records * o.record_size <= tuning::kMaxShuffledChunkBytes;
}

std::uint64_t MemoryPlan::held_once_workspace_bytes(std::uint64_t records_bytes) {
  return std::max(tuning::kInRamWorkspaceBytes, records_bytes / tuning::kInRamWorkspaceDivisor);
}

std::uint64_t MemoryPlan::batch_chunks(std::uint64_t n, const ShuffleOptions& o) {
  const auto threads = static_cast<std::uint64_t>(std::max(device::resolve_threads(o.run.threads), 1));
  const std::uint64_t chunk_bytes = std::max<std::uint64_t>(o.run.constants.leaf_records * o.record_size, 1);
  return std::clamp<std::uint64_t>(held_once_workspace_bytes(n * o.record_size) / (3 * chunk_bytes), 1, threads);
}

std::uint64_t MemoryPlan::batch_bytes(std::uint64_t n, const ShuffleOptions& o) {
  return align_up(std::min(n, batch_chunks(n, o) * o.run.constants.leaf_records) * o.record_size, 64);
}

std::uint64_t MemoryPlan::index_staging_bytes(std::uint64_t n, const ShuffleOptions& o) {
  const std::uint64_t leaf = std::min(n, o.run.constants.leaf_records) * o.record_size;
  return align_up(std::max<std::uint64_t>(std::clamp<std::uint64_t>(leaf / 16, 64 * tuning::kKiB,
                                                                    tuning::kIndexStagingBytes),
                                          o.record_size),
                  64);
}

namespace {

// Index mode: the permutation of one chunk or leaf, and staging for the
// records gathered through it.
std::uint64_t index_bytes(std::uint64_t n, const ShuffleOptions& o) {
  return align_up(4 * std::min(n, o.run.constants.leaf_records), 64) + MemoryPlan::index_staging_bytes(n, o);
}

}  // namespace

std::uint64_t MemoryPlan::workspace_bytes(std::uint64_t n, const ShuffleOptions& o, MemoryMode mode) {
  const core::PlanConstants& c = o.run.constants;
  const bool shuffled = mode == MemoryMode::kShuffle;
  if (core::is_leaf(n, c)) return shuffled ? align_up(n * o.record_size, 64) : index_bytes(n, o);
  const std::uint64_t child = core::bucket_records(n, core::bucket_count(n, c), 0);
  const std::uint64_t first_level = shuffled ? batch_bytes(n, o) : index_bytes(n, o);
  const std::uint64_t buckets = core::is_leaf(child, c)
                                    ? (shuffled ? batch_bytes(n, o) : index_bytes(child, o))
                                    : align_up(child * o.record_size, 64) + workspace_bytes(child, o, mode);
  return std::max(first_level, buckets);
}

namespace {

// The first level of a split node in RAM: every row of its matrix (drawn on
// all threads) and, per bucket, where its next record goes.
struct FirstLevel {
  std::uint64_t chunks, p;
  std::vector<std::uint64_t> rows, cursor;
  FirstLevel(std::uint64_t seed, const core::Node& node, const core::PlanConstants& c, int threads)
      : chunks(core::chunk_count(node.records, c)), p(core::bucket_count(node.records, c)),
        rows(sample_matrix(seed, node, c, threads)), cursor(p) {
    for (std::uint64_t j = 0; j < p; ++j) cursor[j] = core::bucket_first(node.records, p, j);
  }
};

}  // namespace

MemoryPlan::MemoryPlan(const ShuffleOptions& o, MemoryMode mode, std::byte* workspace, EmitOutput emit,
                       WantedFrom wanted)
    : o_(o), shuffles_(mode == MemoryMode::kShuffle), r_(o.record_size),
      threads_(device::resolve_threads(o.run.threads)), workspace_(workspace), emit_(std::move(emit)),
      wanted_(std::move(wanted)) {}

MemoryPlan::~MemoryPlan() {
  if (emitting_.valid()) emitting_.wait();  // an error already propagates: this one is dropped
}

void MemoryPlan::drain() {
  if (!emitting_.valid()) return;
  PhaseTimer timer(output_wait_seconds_);
  emitting_.get();
}

void MemoryPlan::emit_batch(const std::byte* data, std::size_t bytes, bool async) {
  if (!async) {
    drain();
    emit_(data, bytes);
    return;
  }
  drain();
  emitting_ = std::async(std::launch::async, [this, data, bytes] { emit_(data, bytes); });
}

void MemoryPlan::run(const core::Node& node, RecordSource& source, std::byte* node_buffer) {
  if (node.records == 0 || !wanted(node.id.first)) return;
  if (core::is_leaf(node.records, o_.run.constants)) {
    // A leaf needs no node buffer: it is shuffled from where it arrives.
    const std::byte* records = source.records(0, node.records);
    if (shuffles_) {
      device::shuffle_records(
          o_.run.device,
          device::ShuffleJob{
              records, workspace_, node.records,
              core::shuffle_bijection(o_.run.seed, {node.id, core::Purpose::kLeafShuffle, 0}, node.records)},
          r_, threads_);
      emit_(workspace_, node.records * r_);
      return;
    }
    emit_leaves(node, 1, 0, 1, records, workspace_);
    return;
  }
  scatter(node, source, node_buffer, workspace_);
  run_buckets(node, node_buffer, workspace_);
  drain();
}

void MemoryPlan::run_buckets(const core::Node& node, const std::byte* node_buffer) {
  run_buckets(node, node_buffer, workspace_);
  drain();
}

// Steps 1-3 of a split in RAM: the chunks arrive in batches (one chunk at a
// time by index); each chunk's slice j goes to bucket j's place in the node
// buffer, bucket ranges on all threads. Records shuffled in place: the batch
// is shuffled into the chunk buffer and slices are copied whole. By index:
// each chunk's permutation, then the slice's records copied one by one.
void MemoryPlan::scatter(const core::Node& node, RecordSource& source, std::byte* node_buffer, std::byte* workspace) {
  const core::PlanConstants& c = o_.run.constants;
  const std::uint64_t n = node.records;
  // 1. Every row of the matrix at once, on all threads.
  const FirstLevel level(o_.run.seed, node, c, threads_);
  const std::uint64_t p = level.p;
  std::vector<std::uint64_t> cursor = level.cursor, slice_start;
  std::vector<device::ShuffleJob> jobs;
  auto* permutation = reinterpret_cast<std::uint32_t*>(workspace);
  const std::uint64_t batch = shuffles_ ? batch_chunks(n, o_) : 1;
  for (std::uint64_t i0 = 0; i0 < level.chunks; i0 += batch) {
    const std::uint64_t i1 = std::min(level.chunks, i0 + batch);
    const std::uint64_t base = core::chunk_first(i0, c);
    const std::uint64_t batch_records = core::chunk_range_records(n, i0, i1, c);
    // 2. Shuffle the batch's chunks as they arrive.
    const std::byte* in = source.records(base, batch_records);
    jobs.clear();
    for (std::uint64_t i = i0; i < i1; ++i) {
      const std::uint64_t at = (core::chunk_first(i, c) - base) * r_;
      const std::uint64_t m = core::chunk_records(n, i, c);
      jobs.push_back({in + at, workspace + at, m,
                      core::shuffle_bijection(o_.run.seed, {node.id, core::Purpose::kChunkShuffle, i}, m)});
    }
    if (shuffles_) {
      device::shuffle_records(o_.run.device, jobs, r_, threads_);
    } else {
      device::shuffle_permutation(jobs[0].bijection, jobs[0].records, permutation, threads_);
    }
    // 3. Each chunk's slice j to bucket j's cursor.
    slice_start.resize((i1 - i0) * p + 1);
    for (std::uint64_t i = i0; i < i1; ++i) {
      std::uint64_t at = core::chunk_first(i, c) - base;
      for (std::uint64_t j = 0; j < p; ++j) {
        slice_start[(i - i0) * p + j] = at;
        at += level.rows[i * p + j];
      }
    }
    scatter_by_bucket_ranges(p, batch_records * r_ >= tuning::kParallelScatterBytes ? threads_ : 1,
                             [&](std::uint64_t j) {
                               for (std::uint64_t i = i0; i < i1; ++i) {
                                 const std::uint64_t count = level.rows[i * p + j], from = slice_start[(i - i0) * p + j];
                                 std::byte* to = node_buffer + cursor[j] * r_;
                                 if (shuffles_) {
                                   std::memcpy(to, workspace + from * r_, count * r_);
                                 } else {
                                   device::gather_by_permutation(in, permutation + from, count, r_, to);
                                 }
                                 cursor[j] += count;
                               }
                             });
  }
}

// 4. The buckets of a node whose buffer is in bucket order, in turn:
// consecutive leaves in batches, a bucket that splits again in a temporary
// of its own. (Buckets differ by one record at most, but that one record can
// straddle L: some buckets may be leaves and others not.)
void MemoryPlan::run_buckets(const core::Node& node, const std::byte* node_buffer, std::byte* workspace) {
  const core::PlanConstants& c = o_.run.constants;
  const std::uint64_t n = node.records;
  if (n == 0 || !wanted(node.id.first)) return;
  if (core::is_leaf(n, c)) {
    emit_leaves(core::Node{node.id, n}, 1, 0, 1, node_buffer, workspace);
    return;
  }
  const std::uint64_t p = core::bucket_count(n, c);
  const std::uint64_t batch = shuffles_ ? batch_chunks(n, o_) : 1;
  const std::uint64_t child_bytes = align_up(core::bucket_records(n, p, 0) * r_, 64);
  for (std::uint64_t j = 0; j < p && wanted(core::bucket_node(node, p, j).id.first);) {
    const core::Node child = core::bucket_node(node, p, j);
    if (core::is_leaf(child.records, c)) {
      std::uint64_t end = j + 1;
      while (end < p && end - j < batch && core::is_leaf(core::bucket_records(n, p, end), c)) ++end;
      emit_leaves(node, p, j, end, node_buffer, workspace);
      j = end;
      continue;
    }
    // The child's buffer is the workspace, which a batch on the output
    // thread may still be reading.
    drain();
    const std::byte* records = node_buffer + core::bucket_first(n, p, j) * r_;
    std::byte* child_buffer = workspace;
    std::byte* child_workspace = workspace + child_bytes;
    MemorySource source(records, r_);
    scatter(child, source, child_buffer, child_workspace);
    run_buckets(child, child_buffer, child_workspace);
    drain();  // the child's last batch may be read from where the next leaves go
    ++j;
  }
}

// Leaves j0..j1-1 of `node` (p = 1: the node itself is the leaf), each in
// plan order at its place in `node_buffer`, shuffled and handed on in order.
void MemoryPlan::emit_leaves(const core::Node& node, std::uint64_t p, std::uint64_t j0, std::uint64_t j1,
                             const std::byte* node_buffer, std::byte* workspace) {
  const std::uint64_t n = node.records;
  auto leaf = [&](std::uint64_t j) { return p == 1 ? node : core::bucket_node(node, p, j); };
  auto bijection = [&](const core::Node& l) {
    return core::shuffle_bijection(o_.run.seed, {l.id, core::Purpose::kLeafShuffle, 0}, l.records);
  };
  if (shuffles_) {
    // Overlapping, batches alternate between the workspace and the second
    // buffer: the one the output thread may be reading is never the target.
    std::byte* target = workspace;
    if (second_ != nullptr) {
      target = next_buffer_ == 0 ? workspace : second_;
      next_buffer_ ^= 1;
    }
    const std::uint64_t base = p == 1 ? 0 : core::bucket_first(n, p, j0);
    std::vector<device::ShuffleJob> jobs;
    std::uint64_t records = 0;
    for (std::uint64_t j = j0; j < j1 && wanted(leaf(j).id.first); ++j) {
      const core::Node l = leaf(j);
      const std::uint64_t at = (p == 1 ? 0 : core::bucket_first(n, p, j)) - base;
      jobs.push_back({node_buffer + (base + at) * r_, target + at * r_, l.records, bijection(l)});
      records += l.records;
    }
    device::shuffle_records(o_.run.device, jobs, r_, threads_);
    emit_batch(target, records * r_, second_ != nullptr);
    return;
  }
  // Index mode: each leaf's permutation, its records gathered into staging
  // (overlapping, into its two halves in turn: the output thread reads one
  // while the next records are gathered into the other).
  auto* permutation = reinterpret_cast<std::uint32_t*>(workspace);
  std::byte* staging = workspace + align_up(4 * std::min(n, o_.run.constants.leaf_records), 64);
  std::uint64_t capacity = index_staging_bytes(n, o_) / r_;
  const bool async = overlap_ && capacity >= 2;
  if (async) capacity /= 2;
  std::byte* halves[2] = {staging, async ? staging + capacity * r_ : staging};
  int half = 0;
  for (std::uint64_t j = j0; j < j1 && wanted(leaf(j).id.first); ++j) {
    const core::Node l = leaf(j);
    const std::byte* records = node_buffer + (p == 1 ? 0 : core::bucket_first(n, p, j)) * r_;
    device::shuffle_permutation(bijection(l), l.records, permutation, threads_);
    for (std::uint64_t k0 = 0; k0 < l.records; k0 += capacity) {
      const std::uint64_t k1 = std::min(l.records, k0 + capacity);
      std::byte* target = halves[half];
      half ^= 1;
      gather_in_pieces(records, permutation + k0, k1 - k0, target);
      emit_batch(target, (k1 - k0) * r_, async);
    }
  }
}

void MemoryPlan::gather_in_pieces(const std::byte* records, const std::uint32_t* permutation, std::uint64_t count,
                                  std::byte* target) const {
  const std::uint64_t piece = std::max<std::uint64_t>(1, tuning::kGatherPieceBytes / r_);
  const auto pieces = static_cast<std::int64_t>((count + piece - 1) / piece);
  const int threads = count * r_ >= tuning::kParallelScatterBytes ? threads_ : 1;
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) if (threads > 1 && pieces > 1)
  for (std::int64_t t = 0; t < pieces; ++t) {
    const std::uint64_t k = static_cast<std::uint64_t>(t) * piece;
    device::gather_by_permutation(records, permutation + k, std::min(piece, count - k), r_, target + k * r_);
  }
}

}  // namespace extshuffle::ioperm
