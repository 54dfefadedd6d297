// What the CUDA back end (src/device/cuda/) or its disabled stub
// (src/device/cuda_disabled.cpp) provides to the dispatcher. CMake compiles
// exactly one of the two; no #ifdef for CUDA appears anywhere else.
#pragma once

#include <cstddef>
#include <span>

#include "extshuffle/device/shuffle_records.hpp"

namespace extshuffle::device::cuda {

// Runs the jobs on the GPU; byte-identical to the CPU back end.
void shuffle_records_cuda(std::span<const ShuffleJob> jobs, std::size_t record_size);

// Page-locked host memory (cudaHostAlloc); throws DeviceError.
std::byte* allocate_pinned(std::size_t bytes);
void free_pinned(std::byte* memory);

}  // namespace extshuffle::device::cuda
