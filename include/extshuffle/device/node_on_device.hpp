// Whole nodes of the canonical plan on the GPU (docs/conventions.md, Devices): a node that
// fits in device memory runs entirely there, every level below it (chunk
// shuffles, matrix rows, scatter into buckets, leaf shuffles), with one copy
// in and one copy out. The rows are drawn on the host, as everywhere (their
// libm is the one the golden hashes pin), while the chunk shuffles run. The
// output is the node's records in the order of the plan, byte for byte what
// driver::shuffle_in_memory writes on the CPU. No CUDA type appears here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

#include "extshuffle/core/plan.hpp"

namespace extshuffle::device {

struct NodeOnDeviceOptions {
  // Host threads for the staging copies and the matrix rows; 0 = all cores.
  int threads = 0;
  // When set, called before input records are read: returns once the first
  // `records` records of the input are in place (input still arriving).
  std::function<void(std::uint64_t records)> await_input;
  // When set, called with consecutive pieces of the output, in order, as
  // each lands in the output buffer (so it can be written out behind the
  // computation). Neither callback may call the CUDA back end: it is busy
  // with this call.
  std::function<void(const std::byte* data, std::size_t bytes)> emit;
};

// True when a node of `records` records of `record_size` bytes, planned with
// `c`, fits in the free memory of a usable GPU: two buffers of its bytes and
// the per-level scratch (docs/design.md, "The device layer"). False without a
// usable GPU or without the CUDA back end. Cost: one device query.
bool node_fits_on_device(std::uint64_t records, std::size_t record_size,
                         const core::PlanConstants& c = core::kPlanV2);

// Writes `node`'s records, read from `input` (node.records records of
// record_size bytes, the node's input order), to `output` in the node's
// output order under (seed, c). input and output must not overlap; either
// may be pageable or pinned memory. Throws DeviceError without a usable GPU,
// when the node does not fit (see node_fits_on_device) or on a CUDA failure,
// std::invalid_argument when check_plan rejects the node; whatever
// await_input or emit throw passes through. On any throw no copy touches
// input or output after the call.
void shuffle_node_on_device(const core::Node& node, std::uint64_t seed, const core::PlanConstants& c,
                            const std::byte* input, std::byte* output, std::size_t record_size,
                            const NodeOnDeviceOptions& options = {});

// The node's order as 4-byte record indices: order[k] = the input index of
// the record at output position k (for text records, whose bytes stay on
// the host): the same as shuffle_node_on_device on the records 0..n-1 of
// 4 bytes, without copying them in. Needs node.records <= 2^32.
void node_order_on_device(const core::Node& node, std::uint64_t seed, const core::PlanConstants& c,
                          std::uint32_t* order, const NodeOnDeviceOptions& options = {});

}  // namespace extshuffle::device
