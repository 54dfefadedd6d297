// What the CUDA back end (src/device/cuda/) or its disabled stub
// (src/device/cuda_disabled.cpp) provides to the dispatchers. CMake compiles
// exactly one of the two; no #ifdef for CUDA appears anywhere else.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>

#include "device/node_plan.hpp"
#include "extshuffle/device/node_on_device.hpp"
#include "extshuffle/device/shuffle_records.hpp"

namespace extshuffle::device::cuda {

// Sizes of the back end's staging (pinned host memory: slots x slot_bytes
// for data, descriptor_slots x descriptor_slot_bytes for kernel and slice
// descriptors) and of its units of work. Not measured (no GPU): the defaults
// are to be chosen by bench/cuda_shuffle_bench.cu ("pipeline" lines, which
// sweep slot_bytes and unit_bytes); tests shrink them to exercise the ring.
struct StagingConfig {
  std::size_t slot_bytes = std::size_t{8} << 20;
  std::size_t slots = 6;
  std::size_t descriptor_slot_bytes = std::size_t{1} << 20;
  std::size_t descriptor_slots = 4;
  // A unit: jobs packed into one pair of device buffers and launched
  // together; two units are in flight (one copying in while the other runs
  // and copies out). A larger job is a unit of its own.
  std::uint64_t unit_bytes = std::uint64_t{64} << 20;
  std::size_t unit_jobs = 16384;
  // Records a node moves per load or unload group (its copies overlap the
  // kernels of the groups before and after it).
  std::uint64_t node_group_bytes = std::uint64_t{64} << 20;
};

// Runs the jobs on the GPU; byte-identical to the CPU back end. `threads`
// host threads copy to and from the pinned staging.
void shuffle_records_cuda(std::span<const ShuffleJob> jobs, std::size_t record_size, int threads);

// The staging in use, and a new one for the calls that follow (tests and
// benchmarks). Throws DeviceError without a usable GPU.
StagingConfig staging_config();
void configure_staging(const StagingConfig& config);

// Device bytes a node may use now (0 without a usable GPU).
std::uint64_t device_memory_budget_bytes();

// One node on the device: `walk` is called with steps that run on the GPU
// (node_plan.hpp), A loaded from `input` (or with 0..n-1 as 4-byte indices
// when input is null) and B unloaded to `output`. Throws DeviceError.
struct NodeTransfer {
  std::uint64_t records = 0;
  std::size_t record_size = 0;
  const std::byte* input = nullptr;
  std::byte* output = nullptr;
  const NodeOnDeviceOptions* options = nullptr;
  int threads = 1;  // host threads for staging copies
};
void run_node_cuda(const NodeTransfer& transfer, const std::function<void(NodeSteps&)>& walk);

}  // namespace extshuffle::device::cuda
