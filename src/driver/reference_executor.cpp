#include "extshuffle/driver/reference_executor.hpp"

#include <cstring>
#include <stdexcept>
#include <vector>

#include "memory_executor.hpp"

namespace extshuffle::driver {

void shuffle_in_memory(std::span<const std::byte> input, std::span<std::byte> output,
                       std::size_t record_size, std::uint64_t seed,
                       const ReferenceOptions& options) {
  if (record_size == 0) throw std::invalid_argument("record size must be positive");
  if (input.size() % record_size != 0 || output.size() != input.size()) {
    throw std::invalid_argument("input and output must hold the same whole number of records");
  }
  const std::uint64_t n = input.size() / record_size;
  core::check_plan(n, options.constants);
  std::vector<std::byte> records(input.begin(), input.end());
  std::vector<std::byte> workspace(input.size());
  std::byte* out = output.data();
  run_node_in_memory(core::Node{core::NodeId{0, 0}, n}, records.data(), workspace.data(),
                     ShuffleOptions{record_size, seed, options.constants, options.device, options.threads},
                     [&out](const std::byte* data, std::size_t bytes) {
                       std::memcpy(out, data, bytes);
                       out += bytes;
                     });
}

}  // namespace extshuffle::driver
