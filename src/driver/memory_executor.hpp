// Runs a node of the canonical plan entirely in RAM (DESIGN.md 2.3, "a node
// whose records fit in the memory budget"), in two buffers of n records each
// and nothing else: chunks are shuffled A -> B in one batch, scattered B -> A
// into bucket order, and each bucket recurses on its part of A and B. The
// node's output is handed to `emit` in order, piece by piece, so the external
// executor streams it straight to the output file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

#include "extshuffle/core/plan.hpp"
#include "extshuffle/driver/shuffle_options.hpp"

namespace extshuffle::driver {

// Called with consecutive pieces of the node's output, in order.
using EmitOutput = std::function<void(const std::byte* data, std::size_t bytes)>;

// Returns once the first `records` records of the node's input are in place.
using AwaitInput = std::function<void(std::uint64_t records)>;

// `records_in` holds the node's input (node.records records, input order) and
// is overwritten; `workspace` holds as many bytes and is scratch. Cost: one
// shuffle and one copy of the data per plan level below the node. With
// `await_input`, the input may still be arriving: chunks are shuffled as
// their records come in, so reading overlaps the first level's shuffles.
void run_node_in_memory(const core::Node& node, std::byte* records_in, std::byte* workspace,
                        const ShuffleOptions& options, const EmitOutput& emit, const AwaitInput& await_input = {});

}  // namespace extshuffle::driver
