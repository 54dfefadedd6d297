#include "extshuffle/ioperm/reference_shuffle.hpp"

#include <cstring>
#include <stdexcept>
#include <vector>

#include "memory_plan.hpp"

namespace extshuffle::ioperm {

void shuffle_in_memory(std::span<const std::byte> input, std::span<std::byte> output,
                       std::size_t record_size, std::uint64_t seed,
                       const ReferenceOptions& options) {
  if (record_size == 0) throw std::invalid_argument("record size must be positive");
  if (input.size() % record_size != 0 || output.size() != input.size()) {
    throw std::invalid_argument("input and output must hold the same whole number of records");
  }
  const std::uint64_t n = input.size() / record_size;
  core::check_plan(n, options.constants);
  // The public door's options as a run's part: no Job here (tests and tools
  // call the reference shuffle with a seed and these alone).
  RunOptions run;
  run.seed = seed;
  run.constants = options.constants;
  run.device = options.device;
  run.threads = options.threads;
  const ShuffleOptions shuffle{run, record_size};
  const MemoryMode mode = MemoryPlan::fastest_mode(shuffle);
  std::vector<std::byte> buckets(input.size()), workspace(MemoryPlan::workspace_bytes(n, shuffle, mode));
  std::byte* out = output.data();
  MemorySource source(input.data(), record_size);
  MemoryPlan(shuffle, mode, workspace.data(), [&out](const std::byte* data, std::size_t bytes) {
    std::memcpy(out, data, bytes);
    out += bytes;
  }).run(core::Node{core::NodeId{0, 0}, n}, source, buckets.data());
}

}  // namespace extshuffle::ioperm
