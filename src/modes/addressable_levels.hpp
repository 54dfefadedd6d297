// What the addressable permutation (extshuffle/modes/addressable_permutation.hpp)
// keeps per depth of the plan, and the helpers its files share.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "device/cpu/variable_philox_batch.hpp"
#include "extshuffle/core/plan.hpp"
#include "extshuffle/core/variable_philox.hpp"
#include "matrix_columns.hpp"
#include "parallel_tasks.hpp"

namespace extshuffle::modes {

// What one split node at a depth keeps between calls: its matrix when
// small, its column walk when not, the column of the bucket last read, and
// its chunks' bijections.
struct AddressableLevel {
  core::NodeId node{};
  bool has_node = false;
  std::vector<std::uint64_t> cumulative;  // kept matrix: rows x (p + 1), records of chunk i before bucket j
  std::unique_ptr<MatrixColumnWalk> walk;
  std::uint64_t column_bucket = UINT64_MAX;    // the bucket whose column `before` and `start` hold
  std::vector<std::uint64_t> before;           // chunk i's shuffled records before the bucket's slice
  std::vector<std::uint64_t> start;            // where chunk i's slice begins in the bucket's input; rows + 1
  std::vector<core::VariablePhilox> shuffles;  // chunk bijections, for at most kKeptBijectionRows chunks
  std::vector<std::uint8_t> shuffle_built;
  // Scratch of bucket_sources(), kept from node to node at this depth.
  std::vector<std::uint64_t> chunk;  // each position's chunk
  std::vector<std::uint32_t> order;  // positions grouped by chunk
  std::vector<std::uint32_t> first;  // a count, then a start, per chunk
};

struct AddressableCall {
  int threads;
  InterruptPoint interrupt;
};

namespace addressable {

// Below this many positions a piece runs on the calling thread alone.
inline constexpr std::size_t kParallelPositions = std::size_t{1} << 15;

// values[k] = f(values[k]), vectorised.
inline void evaluate_in_place(const core::VariablePhilox& f, std::span<std::uint64_t> values) {
  for (std::size_t first = 0; first < values.size(); first += device::cpu::kPhiloxBatch) {
    const auto count =
        static_cast<std::uint32_t>(std::min<std::size_t>(device::cpu::kPhiloxBatch, values.size() - first));
    if (count < 8) {
      for (std::uint32_t j = 0; j < count; ++j) values[first + j] = f(values[first + j]);
    } else {
      device::cpu::evaluate_variable_philox_at(f, values.data() + first, count, values.data() + first);
    }
  }
}

// fn(begin, end) over slices of [0, count), on the call's threads.
template <class Fn>
void in_slices(std::size_t count, int threads, Fn&& fn) {
  const int workers = count < kParallelPositions ? 1 : threads;
  const std::size_t slices = workers <= 1 ? 1 : static_cast<std::size_t>(workers) * 4;
  const std::size_t size = (count + slices - 1) / slices;
  run_tasks(slices, workers, [&](std::size_t s) {
    const std::size_t begin = std::min(count, s * size);
    fn(begin, std::min(count, begin + size));
  });
}

}  // namespace addressable
}  // namespace extshuffle::modes
