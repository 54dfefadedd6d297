#include "memory_executor.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#include "extshuffle/core/variable_philox.hpp"
#include "executor_support.hpp"
#include "matrix_rows.hpp"

namespace extshuffle::driver {

namespace {

// Jobs per batch of the back end: a multiple of the thread count, so that no
// job is split across threads (which evaluates its bijection twice), and
// small enough that input can still be arriving and output leaving.
std::size_t batch_jobs(const ShuffleOptions& options) {
  const int threads = device::resolve_threads(options.threads);
  return 2 * static_cast<std::size_t>(std::max(threads, 1));
}

// Step 3 of the split, B -> A: bucket j's slice of chunk i goes to bucket
// j's cursor. Buckets are written by ranges on all threads (a copy bound by
// memory bandwidth); each bucket's bytes, hence the output, do not depend
// on the split.
void scatter_to_buckets(const core::Node& node, const std::byte* b, std::byte* a, const ShuffleOptions& options,
                        const std::vector<std::uint64_t>& rows) {
  const core::PlanConstants& c = options.constants;
  const std::size_t r = options.record_size;
  const std::uint64_t n = node.records;
  const std::uint64_t chunks = core::chunk_count(n, c);
  const std::uint64_t p = core::bucket_count(n, c);
  // Where bucket j's slice of chunk i starts in B (a prefix sum per row).
  std::vector<std::uint64_t> slice_start(chunks * p);
  for (std::uint64_t i = 0; i < chunks; ++i) {
    std::uint64_t at = core::chunk_first(i, c);
    for (std::uint64_t j = 0; j < p; ++j) {
      slice_start[i * p + j] = at;
      at += rows[i * p + j];
    }
  }
  const int threads = device::resolve_threads(options.threads);
  scatter_by_bucket_ranges(p, n * r >= tuning::kParallelScatterBytes ? threads : 1, [&](std::uint64_t j) {
    std::uint64_t cursor = core::bucket_first(n, p, j);
    for (std::uint64_t i = 0; i < chunks; ++i) {
      const std::uint64_t count = rows[i * p + j];
      std::memcpy(a + cursor * r, b + slice_start[i * p + j] * r, count * r);
      cursor += count;
    }
  });
}

}  // namespace

void run_node_in_memory(const core::Node& node, std::byte* a, std::byte* b, const ShuffleOptions& options,
                        const EmitOutput& emit, const AwaitInput& await_input) {
  const core::PlanConstants& c = options.constants;
  const std::size_t r = options.record_size;
  const std::uint64_t n = node.records;
  if (n == 0) return;
  // Leaf (DESIGN.md 2.1): one bijective shuffle A -> B.
  if (core::is_leaf(n, c)) {
    if (await_input) await_input(n);
    const device::ShuffleJob job{a, b, n,
                                 core::shuffle_bijection(options.seed, {node.id, core::Purpose::kLeafShuffle, 0}, n)};
    device::shuffle_records(options.device, job, r, options.threads);
    emit(b, n * r);
    return;
  }
  // Split node (Gustedt, IOPerm).
  const std::uint64_t chunks = core::chunk_count(n, c);
  const std::uint64_t p = core::bucket_count(n, c);
  const std::size_t batch = batch_jobs(options);
  // 2. Shuffle every chunk A -> B, in batches that run in parallel, each as
  //    soon as its chunks have been read.
  std::vector<device::ShuffleJob> jobs;
  for (std::uint64_t i0 = 0; i0 < chunks; i0 += batch) {
    const std::uint64_t i1 = std::min<std::uint64_t>(chunks, i0 + batch);
    if (await_input) await_input(i1 == chunks ? n : core::chunk_first(i1, c));
    jobs.clear();
    for (std::uint64_t i = i0; i < i1; ++i) {
      const std::uint64_t first = core::chunk_first(i, c);
      const std::uint64_t m = core::chunk_records(n, i, c);
      jobs.push_back({a + first * r, b + first * r, m,
                      core::shuffle_bijection(options.seed, {node.id, core::Purpose::kChunkShuffle, i}, m)});
    }
    device::shuffle_records(options.device, jobs, r, options.threads);
  }
  // 1 and 3. Row i of the matrix says how many of chunk i's shuffled records
  //    go to each bucket, in bucket order (all rows drawn on all threads):
  //    scatter B -> A at the bucket cursors.
  scatter_to_buckets(node, b, a, options,
                     sample_matrix(options.seed, node, c, device::resolve_threads(options.threads)));
  // 4. Each bucket is a node of its own; their outputs follow in bucket order.
  //    Buckets differ in size by one record at most, so they are all leaves or
  //    none: leaves are shuffled A -> B in batches, one job per thread, each
  //    batch's output handed on while the next is shuffled.
  if (core::is_leaf(core::bucket_records(n, p, 0), c)) {
    for (std::uint64_t j0 = 0; j0 < p; j0 += batch) {
      const std::uint64_t j1 = std::min<std::uint64_t>(p, j0 + batch);
      jobs.clear();
      for (std::uint64_t j = j0; j < j1; ++j) {
        const core::Node child = core::bucket_node(node, p, j);
        const std::uint64_t offset = core::bucket_first(n, p, j) * r;
        jobs.push_back({a + offset, b + offset, child.records,
                        core::shuffle_bijection(options.seed, {child.id, core::Purpose::kLeafShuffle, 0}, child.records)});
      }
      device::shuffle_records(options.device, jobs, r, options.threads);
      const std::uint64_t begin = core::bucket_first(n, p, j0);
      const std::uint64_t end = j1 == p ? n : core::bucket_first(n, p, j1);
      emit(b + begin * r, (end - begin) * r);
    }
    return;
  }
  for (std::uint64_t j = 0; j < p; ++j) {
    const std::uint64_t offset = core::bucket_first(n, p, j) * r;
    run_node_in_memory(core::bucket_node(node, p, j), a + offset, b + offset, options, emit);
  }
}

}  // namespace extshuffle::driver
