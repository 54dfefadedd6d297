#include "device/node_plan.hpp"

#include <algorithm>
#include <vector>

#include "extshuffle/core/recursive_matrix.hpp"

namespace extshuffle::device {
namespace {

// A node of a level and where its records start (records from the walked node's first).
struct LevelNode {
  core::Node node;
  std::uint64_t offset = 0;
};

// Rows of one matrix drawn by one task: a subtree-aligned range, so tasks
// share no splits below their common path. 64 rows of 2^10 buckets are
// ~65000 hypergeometric draws, ~10 ms: enough to amortise a task.
constexpr std::uint64_t kRowsPerTask = 64;

NodeShuffle leaf_job(const LevelNode& leaf, std::uint64_t seed) {
  const core::Node& n = leaf.node;
  return {leaf.offset, n.records, core::shuffle_bijection(seed, {n.id, core::Purpose::kLeafShuffle, 0}, n.records)};
}

void add_chunk_jobs(const LevelNode& split, std::uint64_t seed, const core::PlanConstants& c, std::uint64_t i0,
                    std::uint64_t i1, std::vector<NodeShuffle>& jobs) {
  const core::Node& n = split.node;
  for (std::uint64_t i = i0; i < i1; ++i) {
    const std::uint64_t m = core::chunk_records(n.records, i, c);
    jobs.push_back({split.offset + core::chunk_first(i, c), m,
                    core::shuffle_bijection(seed, {n.id, core::Purpose::kChunkShuffle, i}, m)});
  }
}

// Steps 1 and 3 of every split of a level (Gustedt, IOPerm): the rows of
// each node's communication matrix (RecMat, core/recursive_matrix.hpp), drawn
// by row ranges on all threads, then the slices that move each shuffled
// chunk's records to their buckets: bucket j's part of chunk i follows the
// parts of chunks 0..i-1 in bucket j.
std::vector<NodeSlice> level_slices(const std::vector<LevelNode>& splits, std::uint64_t seed,
                                    const core::PlanConstants& c, int threads) {
  struct Task {
    std::size_t node;
    std::uint64_t first, end;
  };
  std::vector<std::vector<std::uint64_t>> rows(splits.size());
  std::vector<Task> tasks;
  for (std::size_t k = 0; k < splits.size(); ++k) {
    const std::uint64_t n = splits[k].node.records;
    const std::uint64_t chunks = core::chunk_count(n, c);
    rows[k].resize(chunks * core::bucket_count(n, c));
    for (std::uint64_t first = 0; first < chunks; first += kRowsPerTask) {
      tasks.push_back({k, first, std::min(chunks, first + kRowsPerTask)});
    }
  }
  const auto task_count = static_cast<std::int64_t>(tasks.size());
#pragma omp parallel for schedule(dynamic) num_threads(threads) if (task_count > 1)
  for (std::int64_t t = 0; t < task_count; ++t) {
    const Task& task = tasks[static_cast<std::size_t>(t)];
    const core::Node& node = splits[task.node].node;
    const std::uint64_t p = core::bucket_count(node.records, c);
    core::RecursiveMatrix matrix(seed, node.id, node.records, c);
    matrix.rows(task.first, task.end,
                std::span<std::uint64_t>(rows[task.node]).subspan(task.first * p, (task.end - task.first) * p));
  }
  std::vector<NodeSlice> slices;
  for (std::size_t k = 0; k < splits.size(); ++k) {
    const std::uint64_t n = splits[k].node.records;
    const std::uint64_t chunks = core::chunk_count(n, c);
    const std::uint64_t p = core::bucket_count(n, c);
    std::vector<std::uint64_t> cursor(p);
    for (std::uint64_t j = 0; j < p; ++j) cursor[j] = splits[k].offset + core::bucket_first(n, p, j);
    for (std::uint64_t i = 0; i < chunks; ++i) {
      std::uint64_t at = splits[k].offset + core::chunk_first(i, c);
      for (std::uint64_t j = 0; j < p; ++j) {
        const std::uint64_t count = rows[k][i * p + j];
        if (count == 0) continue;
        slices.push_back({at, cursor[j], count});
        at += count;
        cursor[j] += count;
      }
    }
  }
  return slices;
}

// The last level: leaves only. The input is loaded already unless the walked
// node is itself a leaf. Leaves go in groups; each group's output, with the
// outputs of earlier levels' leaves before it, is final once it has run.
void run_last_level(const std::vector<LevelNode>& leaves, bool loaded, std::uint64_t n, std::uint64_t seed,
                    std::uint64_t group_records, NodeSteps& steps) {
  if (!loaded) {
    for (std::uint64_t first = 0; first < n; first += group_records) {
      steps.load(first, std::min(n, first + group_records));
    }
    const NodeShuffle job = leaf_job(leaves.front(), seed);
    steps.shuffle(std::span<const NodeShuffle>(&job, 1));
    steps.unload(0, n);
    return;
  }
  std::vector<NodeShuffle> jobs;
  std::uint64_t unloaded = 0;
  std::uint64_t group = 0;
  for (std::size_t k = 0; k < leaves.size(); ++k) {
    jobs.push_back(leaf_job(leaves[k], seed));
    group += leaves[k].node.records;
    if (group < group_records && k + 1 < leaves.size()) continue;
    steps.shuffle(jobs);
    const std::uint64_t end = k + 1 < leaves.size() ? leaves[k].offset + leaves[k].node.records : n;
    steps.unload(unloaded, end);
    unloaded = end;
    jobs.clear();
    group = 0;
  }
}

}  // namespace

void walk_node_plan(const core::Node& node, std::uint64_t seed, const core::PlanConstants& c,
                    std::uint64_t group_records, int threads, NodeSteps& steps) {
  const std::uint64_t n = node.records;
  if (n == 0) return;
  core::check_plan(n, c);
  group_records = std::max<std::uint64_t>(group_records, 1);
  std::vector<LevelNode> level{{node, 0}};
  bool loaded = false;
  std::vector<NodeShuffle> jobs;
  for (;;) {
    std::vector<LevelNode> splits;
    std::vector<LevelNode> leaves;
    for (const LevelNode& x : level) (core::is_leaf(x.node.records, c) ? leaves : splits).push_back(x);
    if (splits.empty()) return run_last_level(leaves, loaded, n, seed, group_records, steps);
    // 2. Shuffle every chunk A -> B. The walked node's chunks go group by
    //    group as their input is loaded; a deeper level's leaves (a level
    //    can mix leaves of L records and splits of L + 1) go with its chunks.
    jobs.clear();
    if (!loaded) {
      const LevelNode& root = splits.front();
      const std::uint64_t chunks = core::chunk_count(n, c);
      const std::uint64_t group_chunks = std::max<std::uint64_t>(1, group_records / c.leaf_records);
      for (std::uint64_t i0 = 0; i0 < chunks; i0 += group_chunks) {
        const std::uint64_t i1 = std::min(chunks, i0 + group_chunks);
        steps.load(core::chunk_first(i0, c), i1 == chunks ? n : core::chunk_first(i1, c));
        jobs.clear();
        add_chunk_jobs(root, seed, c, i0, i1, jobs);
        steps.shuffle(jobs);
      }
      loaded = true;
    } else {
      for (const LevelNode& leaf : leaves) jobs.push_back(leaf_job(leaf, seed));
      for (const LevelNode& split : splits) {
        add_chunk_jobs(split, seed, c, 0, core::chunk_count(split.node.records, c), jobs);
      }
      steps.shuffle(jobs);
    }
    // 1 and 3. The rows (drawn while the shuffles run), then the scatter B -> A.
    steps.scatter(level_slices(splits, seed, c, threads));
    // 4. Each bucket is a node of the next level.
    std::vector<LevelNode> next;
    for (const LevelNode& split : splits) {
      const std::uint64_t p = core::bucket_count(split.node.records, c);
      for (std::uint64_t j = 0; j < p; ++j) {
        next.push_back({core::bucket_node(split.node, p, j),
                        split.offset + core::bucket_first(split.node.records, p, j)});
      }
    }
    level = std::move(next);
  }
}

}  // namespace extshuffle::device
