// The dispatch layer of the CUDA back end (docs/conventions.md, Devices; CUB's dispatch ->
// agent -> kernel): launches on data already resident on the device, with
// the kernel chosen for the jobs' shapes. No kernel types appear here, so the
// host-side planning (units, transfers, whole nodes) is plain C++.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "device/cuda/pinned_ring.hpp"
#include "extshuffle/core/variable_philox.hpp"

namespace extshuffle::device::cuda {

// One bijective shuffle on the device: records at d_input + offset_bytes go,
// shuffled, to d_output + offset_bytes (records > 0).
struct LaunchJob {
  core::VariablePhilox bijection;
  std::uint64_t records = 0;
  std::uint64_t offset_bytes = 0;
};

// `records` records from record `from` of one buffer to record `to` of another.
struct Slice {
  std::uint64_t from = 0;
  std::uint64_t to = 0;
  std::uint64_t records = 0;
};

// Which kernel runs which job. A small job (domain <= kBatchMaxDomain) goes to
// the batched kernel when there are at least batch_min_jobs of them in the
// call (enough blocks to fill the GPU), every other job to the single-pass
// kernel. Not measured (no GPU): chosen by bench/cuda_shuffle_bench.cu
// ("production shapes" lines: shuffle_batch vs shuffle_tiles on 2^20-record
// chunks and leaves and on the tail job).
struct KernelChoice {
  std::uint64_t batch_max_domain = std::uint64_t{1} << 17;
  std::uint64_t batch_min_jobs = 0;  // 0: twice the multiprocessor count
};

// Queues the shuffles of `jobs` on `stream`. Job descriptors go through
// `descriptors` (pinned slots, so that no pageable copy can stall the
// stream); scratch (look-back state) is allocated stream-ordered. Throws
// DeviceError on a CUDA failure. Returns before the kernels run.
void launch_shuffles(std::span<const LaunchJob> jobs, const std::byte* d_input, std::byte* d_output,
                     std::size_t record_size, PinnedRing& descriptors, cudaStream_t stream,
                     const KernelChoice& choice = {});

// Device bytes launch_shuffles needs beyond the data for these jobs (the
// look-back state and descriptor copies), an upper bound.
std::uint64_t launch_scratch_bytes(std::span<const LaunchJob> jobs);

// Queues copies of `slices` of records of record_size bytes from d_from to
// d_to on `stream`, descriptors through `descriptors`.
void launch_scatter(std::span<const Slice> slices, const std::byte* d_from, std::byte* d_to,
                    std::size_t record_size, PinnedRing& descriptors, cudaStream_t stream);

// Queues values[k] = k for k < n (4-byte record indices) on `stream`.
void launch_iota(std::uint32_t* d_values, std::uint64_t n, cudaStream_t stream);

// Whether this build has kernels the current GPU can run; `why` says why not.
bool kernels_loadable(std::string& why);

}  // namespace extshuffle::device::cuda
