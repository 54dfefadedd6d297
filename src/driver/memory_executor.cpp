#include "memory_executor.hpp"

#include <cstring>
#include <vector>

#include "extshuffle/core/matrix_row_sampler.hpp"
#include "extshuffle/core/variable_philox.hpp"

namespace extshuffle::driver {

std::vector<std::uint64_t> sample_matrix(std::uint64_t seed, const core::Node& node,
                                         const core::PlanConstants& constants) {
  const std::uint64_t chunks = core::chunk_count(node.records, constants);
  const std::uint64_t p = core::bucket_count(node.records, constants);
  std::vector<std::uint64_t> rows(chunks * p);
  core::MatrixRowSampler sampler(seed, node.id, node.records, constants);
  for (std::uint64_t i = 0; i < chunks; ++i) {
    sampler.next_row(std::span<std::uint64_t>(rows.data() + i * p, p));
  }
  return rows;
}

void run_node_in_memory(const core::Node& node, std::byte* a, std::byte* b,
                        const ShuffleOptions& options, const EmitOutput& emit) {
  const core::PlanConstants& c = options.constants;
  const std::size_t r = options.record_size;
  const std::uint64_t n = node.records;
  if (n == 0) return;
  // Leaf (DESIGN.md 2.1): one bijective shuffle A -> B.
  if (core::is_leaf(n, c)) {
    const device::ShuffleJob job{a, b, n,
                                 core::shuffle_bijection(options.seed, {node.id, core::Purpose::kLeafShuffle, 0}, n)};
    device::shuffle_records(options.device, job, r, options.threads);
    emit(b, n * r);
    return;
  }
  // Split node (Gustedt, IOPerm).
  const std::uint64_t chunks = core::chunk_count(n, c);
  const std::uint64_t p = core::bucket_count(n, c);
  // 2. Shuffle every chunk A -> B, all in one batch so the back end runs them in parallel.
  std::vector<device::ShuffleJob> jobs;
  jobs.reserve(chunks);
  for (std::uint64_t i = 0; i < chunks; ++i) {
    const std::uint64_t first = core::chunk_first(i, c);
    const std::uint64_t m = core::chunk_records(n, i, c);
    jobs.push_back({a + first * r, b + first * r, m,
                    core::shuffle_bijection(options.seed, {node.id, core::Purpose::kChunkShuffle, i}, m)});
  }
  device::shuffle_records(options.device, jobs, r, options.threads);
  // 1 and 3. Row i of the matrix says how many of chunk i's shuffled records
  //    go to each bucket, in bucket order: scatter B -> A at the bucket cursors.
  const std::vector<std::uint64_t> rows = sample_matrix(options.seed, node, c);
  std::vector<std::uint64_t> cursor(p);
  for (std::uint64_t j = 0; j < p; ++j) cursor[j] = core::bucket_first(n, p, j);
  for (std::uint64_t i = 0; i < chunks; ++i) {
    const std::byte* from = b + core::chunk_first(i, c) * r;
    for (std::uint64_t j = 0; j < p; ++j) {
      const std::uint64_t count = rows[i * p + j];
      std::memcpy(a + cursor[j] * r, from, count * r);
      from += count * r;
      cursor[j] += count;
    }
  }
  // 4. Each bucket is a node of its own; their outputs follow in bucket order.
  //    Buckets differ in size by one record at most, so they are all leaves or
  //    none: leaves are shuffled A -> B as one batch, one job per thread.
  if (core::is_leaf(core::bucket_records(n, p, 0), c)) {
    jobs.clear();
    for (std::uint64_t j = 0; j < p; ++j) {
      const core::Node child = core::bucket_node(node, p, j);
      const std::uint64_t offset = core::bucket_first(n, p, j) * r;
      jobs.push_back({a + offset, b + offset, child.records,
                      core::shuffle_bijection(options.seed, {child.id, core::Purpose::kLeafShuffle, 0}, child.records)});
    }
    device::shuffle_records(options.device, jobs, r, options.threads);
    emit(b, n * r);
    return;
  }
  for (std::uint64_t j = 0; j < p; ++j) {
    const std::uint64_t offset = core::bucket_first(n, p, j) * r;
    run_node_in_memory(core::bucket_node(node, p, j), a + offset, b + offset, options, emit);
  }
}

}  // namespace extshuffle::driver
