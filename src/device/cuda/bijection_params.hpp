// The bijection as kernel parameters and the tile arithmetic of the CUDA
// bijective shuffle (docs/conventions.md, The bijective shuffle): what the
// kernels (bijective_shuffle_kernels.cuh, bijection_tiles.cuh) compute per
// index, and what kernel_launch.cu computes on the host to size a launch.
// Plain C++ on core only, host and device (no CUB, no CUDA header): nvcc
// compiles it into the kernels, and the host compiler into
// tests/device/cuda_kernel_host_test.cpp, which checks it against core on
// the CPU of any machine (compiling CUB and the CUDA runtime's headers for
// that test alone cost more than the rest of its room).
#pragma once

#include <cstddef>
#include <cstdint>

#include "extshuffle/core/host_device.hpp"
#include "extshuffle/core/variable_philox.hpp"

// `#pragma unroll` for loops of functions that are also compiled for the host
// (where GCC would warn about an unknown pragma).
#if defined(__CUDA_ARCH__)
#define EXTSHUFFLE_UNROLL _Pragma("unroll")
#else
#define EXTSHUFFLE_UNROLL
#endif

// __forceinline__ under nvcc (the kernels' register budget counts on it),
// plain inline for the host compiler.
#if defined(__CUDACC__)
#define EXTSHUFFLE_FORCEINLINE __forceinline__
#else
#define EXTSHUFFLE_FORCEINLINE inline
#endif

namespace extshuffle::device::cuda::kernels {

// Tile shape. 256 x 16 keeps the staging buffer of the single-pass kernel at
// 32 KiB of static shared memory and gives each thread 16 independent Philox
// evaluations and 16 loads in flight. Not measured (no GPU): provisional
// until chosen by bench/cuda_shuffle_bench.cu (shuffle_single and
// shuffle_batch lines, one build per shape).
inline constexpr int kBlockThreads = 256;
inline constexpr int kItemsPerThread = 16;
inline constexpr int kTileItems = kBlockThreads * kItemsPerThread;

// VariablePhilox as plain data: no default member initialisers, so it can
// live in __shared__ memory. Filled from the core class's accessors; the
// rounds themselves are core's (core::VariablePhilox::split/round/join).
struct BijectionParams {
  std::uint32_t keys[core::kVariablePhiloxMaxRounds];
  core::VariablePhilox::Halves halves;
  std::int32_t rounds;
};

EXTSHUFFLE_HOST_DEVICE inline BijectionParams make_bijection_params(const core::VariablePhilox& f) {
  BijectionParams p{};
  for (int r = 0; r < f.rounds(); ++r) p.keys[r] = f.key(r);
  p.halves = f.halves();
  p.rounds = f.rounds();
  return p;
}

EXTSHUFFLE_HOST_DEVICE inline std::uint64_t domain_size(const BijectionParams& f) {
  return std::uint64_t{1} << (f.halves.left_bits + f.halves.right_bits);
}

// values[j] = f(first + j) for j < kItems: core::VariablePhilox::operator()
// with the rounds outermost, so one key load serves all items and the items'
// multiplies overlap. Host and device, so tests/device/cuda_kernel_host_test.cpp
// can compare it with core on the CPU.
template <int kItems>
EXTSHUFFLE_HOST_DEVICE EXTSHUFFLE_FORCEINLINE void evaluate_bijection(const BijectionParams& f, std::uint64_t first,
                                                                      std::uint64_t (&values)[kItems]) {
  using Philox = core::VariablePhilox;
  const Philox::Halves halves = f.halves;  // registers, not shared memory, in the rounds
  std::uint32_t state0[kItems];
  std::uint32_t state1[kItems];
  EXTSHUFFLE_UNROLL
  for (int j = 0; j < kItems; ++j) {
    Philox::split(halves, first + static_cast<std::uint64_t>(j), state0[j], state1[j]);
  }
  for (int r = 0; r < f.rounds; ++r) {
    const std::uint32_t key = f.keys[r];
    EXTSHUFFLE_UNROLL
    for (int j = 0; j < kItems; ++j) Philox::round(halves, key, state0[j], state1[j]);
  }
  EXTSHUFFLE_UNROLL
  for (int j = 0; j < kItems; ++j) values[j] = Philox::join(halves, state0[j], state1[j]);
}

// Tiles of a domain; the last is partial only when domain < kTileItems.
EXTSHUFFLE_HOST_DEVICE inline std::uint64_t tiles_for_domain(std::uint64_t domain) {
  return (domain + kTileItems - 1) / kTileItems;
}

// The job that global tile `tile` belongs to: the last j with
// first_tiles[j] <= tile (first_tiles ascending, first_tiles[0] == 0). Host
// and device, so tests/device/cuda_kernel_host_test.cpp checks it on the CPU.
EXTSHUFFLE_HOST_DEVICE EXTSHUFFLE_FORCEINLINE std::uint32_t job_of_tile(const std::uint64_t* first_tiles,
                                                                        std::uint32_t jobs, std::uint64_t tile) {
  std::uint32_t lo = 0;
  std::uint32_t hi = jobs;  // invariant: first_tiles[lo] <= tile < first_tiles[hi] (hi == jobs: end)
  while (hi - lo > 1) {
    const std::uint32_t mid = lo + (hi - lo) / 2;
    if (first_tiles[mid] <= tile) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return lo;
}

}  // namespace extshuffle::device::cuda::kernels
