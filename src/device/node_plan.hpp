// The canonical plan below one node, as a sequence of bulk steps for a place
// that holds the whole node (docs/conventions.md, The canonical
// plan, Devices: "whole nodes that fit in device memory"). The walk decides what runs; NodeSteps says how: the CUDA
// back end queues copies and kernels, the tests run the same walk on the CPU
// and compare it with the plan oracle. Two buffers A and B of the node's
// size: the input is loaded into A; a split shuffles its chunks A -> B and
// scatters them B -> A in bucket order, its buckets then run on their parts
// of A and B; a leaf is shuffled A -> B. So every record ends in B at its
// output position, the same two-buffer scheme as ioperm/memory_plan.cpp.
//
// The walk goes level by level, each step covering every node of a level
// (one launch for thousands of chunks), and draws the matrix rows of a level
// on the host while the level's chunk shuffles run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "extshuffle/core/plan.hpp"
#include "extshuffle/core/variable_philox.hpp"

namespace extshuffle::device {

// A bijective shuffle of the records [first, first + records) (record
// offsets from the node's first record), A -> B.
struct NodeShuffle {
  std::uint64_t first = 0;
  std::uint64_t records = 0;
  core::VariablePhilox bijection;
};

// `records` records from record `from` of B to record `to` of A.
struct NodeSlice {
  std::uint64_t from = 0;
  std::uint64_t to = 0;
  std::uint64_t records = 0;
};

class NodeSteps {
 public:
  virtual ~NodeSteps() = default;
  // Input records [first, end) into A. Called in order, covering the node.
  virtual void load(std::uint64_t first, std::uint64_t end) = 0;
  virtual void shuffle(std::span<const NodeShuffle> jobs) = 0;   // A -> B
  virtual void scatter(std::span<const NodeSlice> slices) = 0;  // B -> A
  // Records [first, end) of B are the node's final output. Called in order,
  // covering the node.
  virtual void unload(std::uint64_t first, std::uint64_t end) = 0;
};

// Runs the plan of `node` (seed, constants `c`) through `steps`. Loads and
// unloads go in groups of about `group_records` records (whole chunks, whole
// leaves), the first level's chunk shuffles group by group as their input is
// loaded and the last level's leaves group by group before their unload, so a
// place that queues its steps overlaps copies with kernels. Matrix rows are
// drawn on `threads` host threads. Throws std::invalid_argument when
// check_plan rejects the node.
void walk_node_plan(const core::Node& node, std::uint64_t seed, const core::PlanConstants& c,
                    std::uint64_t group_records, int threads, NodeSteps& steps);

}  // namespace extshuffle::device
