// Dispatch of whole nodes to the CUDA back end (node_on_device.hpp): the
// plan walk (node_plan.cpp) over the back end's device steps.
#include "extshuffle/device/node_on_device.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "cuda_backend.hpp"
#include "device/node_plan.hpp"
#include "extshuffle/device/device_error.hpp"
#include "extshuffle/device/shuffle_records.hpp"

namespace extshuffle::device {
namespace {

// Device bytes a node needs: A and B, plus the scratch of the launches in
// flight (look-back state, 16 bytes per tile of 4096 domain indices, with
// domains up to twice the records; two launches' worth) and a fixed 64 MiB
// for descriptor copies and the pool's rounding.
std::uint64_t node_device_bytes(std::uint64_t records, std::size_t record_size) {
  const std::uint64_t data = (records * record_size + 255) / 256 * 256;
  return 2 * data + 2 * (2 * records / 4096 + 1) * 16 + (std::uint64_t{64} << 20);
}

bool fits(std::uint64_t records, std::size_t record_size, std::uint64_t budget) {
  if (record_size == 0 || records > UINT64_MAX / 4 / record_size) return false;
  return node_device_bytes(records, record_size) <= budget;
}

void run(const core::Node& node, std::uint64_t seed, const core::PlanConstants& c, const std::byte* input,
         std::byte* output, std::size_t record_size, const NodeOnDeviceOptions& options) {
  require_usable(Device::kCuda);
  if (node.records == 0) return;
  core::check_plan(node.records, c);
  const std::uint64_t budget = cuda::device_memory_budget_bytes();
  if (!fits(node.records, record_size, budget)) {
    throw DeviceError("CUDA node: " + std::to_string(node.records) + " records of " + std::to_string(record_size) +
                      " bytes need " + std::to_string(node_device_bytes(node.records, record_size)) +
                      " bytes of device memory, " + std::to_string(budget) + " available");
  }
  const int threads = resolve_threads(options.threads);
  const std::uint64_t group_records =
      std::max<std::uint64_t>(1, cuda::staging_config().node_group_bytes / record_size);
  const cuda::NodeTransfer transfer{node.records, record_size, input, output, &options, threads};
  cuda::run_node_cuda(transfer, [&](NodeSteps& steps) {
    walk_node_plan(node, seed, c, group_records, threads, steps);
  });
}

}  // namespace

bool node_fits_on_device(std::uint64_t records, std::size_t record_size, const core::PlanConstants& c) {
  if (!cuda_available()) return false;
  if (records > 0) {
    try {
      core::check_plan(records, c);
    } catch (const std::invalid_argument&) {
      return false;
    }
  }
  return fits(records, record_size, cuda::device_memory_budget_bytes());
}

void shuffle_node_on_device(const core::Node& node, std::uint64_t seed, const core::PlanConstants& c,
                            const std::byte* input, std::byte* output, std::size_t record_size,
                            const NodeOnDeviceOptions& options) {
  if (node.records > 0 && (input == nullptr || output == nullptr || record_size == 0)) {
    throw DeviceError("CUDA node: null input or output, or a record size of 0");
  }
  run(node, seed, c, input, output, record_size, options);
}

void node_order_on_device(const core::Node& node, std::uint64_t seed, const core::PlanConstants& c,
                          std::uint32_t* order, const NodeOnDeviceOptions& options) {
  if (node.records > (std::uint64_t{1} << 32)) {
    throw DeviceError("CUDA node order: " + std::to_string(node.records) +
                      " records do not have 4-byte indices");
  }
  if (node.records > 0 && order == nullptr) throw DeviceError("CUDA node order: null output");
  run(node, seed, c, nullptr, reinterpret_cast<std::byte*>(order), sizeof(std::uint32_t), options);
}

}  // namespace extshuffle::device
