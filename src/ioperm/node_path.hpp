// Where the walk runs each node of the plan, and how each way of running
// carves the budget (docs/conventions.md, The walk). One function decides for the walk
// (plan_walk.cpp) and for the schedule (--dry-run), so the prediction is the
// run's own decision:
//   - in RAM: the node's records, held once, fit in the budget;
//   - a split with its chunks in memory: records in plan order whose chunks
//     surely fit in the chunk memory (a group of them for fixed-size
//     records; for text, L records of the input's longest): shuffled in
//     memory, slices to the buckets;
//   - a routed split: otherwise; each record goes straight to its bucket
//     through its chunk's inverse permutation, behind a position tag, with
//     no chunk ever in memory and no extra pass (docs/design.md, "Large
//     records");
//   - a leaf in windows: a leaf larger than memory: its records routed by
//     output position into windows through scratch space, each window then
//     placed in memory and handed on: one extra write and read of the leaf.
#pragma once

#include <cstdint>

#include "extshuffle/core/plan.hpp"
#include "extshuffle/ioperm/node_facts.hpp"
#include "record_layout.hpp"
#include "routed_memory.hpp"

namespace extshuffle::ioperm {

NodePath choose_path(const RecordLayout& layout, const NodeFacts& node, std::uint64_t budget);

// The smallest budget with which every node of a plan of `records` records
// can run (whatever path each takes); BudgetError below it.
// `record_bytes` 0: unknown, taken as records x the longest.
std::uint64_t minimum_memory_bytes(const RecordLayout& layout, std::uint64_t records, std::uint64_t record_bytes,
                                   std::uint64_t longest_record_bytes);

// Where the walk would run each node, without IO: one representative node
// a level (nodes of a level differ by at most one record), the decision
// above at each. Fixed-size records: exactly what runs. Text: the nodes'
// bytes vary with the records they draw; with the records' variance in
// bytes^2, the share of a level's nodes that fit in RAM is that of a normal
// law of their sizes (the expected IO, rounded; a level counts as a pass
// when some node of it more likely streams than not).
Schedule plan_schedule(const RecordLayout& layout, std::uint64_t records, std::uint64_t record_bytes,
                       std::uint64_t max_record_bytes, std::uint64_t budget, double record_bytes_variance = 0);

// Bytes a node's records take in scratch space or its input, tags included.
std::uint64_t stored_bytes(const RecordLayout& layout, const NodeFacts& node);

}  // namespace extshuffle::ioperm
