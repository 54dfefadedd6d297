// The device layer: bijective shuffles of fixed-size records, on the CPU or
// on a CUDA GPU, with byte-identical results (docs/conventions.md, The bijective shuffle, Devices). No CUDA
// type appears here; the CUDA back end is compiled in or replaced by a stub.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "extshuffle/core/variable_philox.hpp"

namespace extshuffle::device {

enum class Device { kCpu, kCuda };

// One bijective shuffle: output[j] = input[f(i_j)] where i_0 < i_1 < ... are
// the indices of f's domain with f(i) < records (Mitchell et al., Algorithm 1).
// input and output hold records * record_size bytes and must not overlap.
struct ShuffleJob {
  const std::byte* input = nullptr;
  std::byte* output = nullptr;
  std::uint64_t records = 0;
  core::VariablePhilox bijection;
};

// Runs every job of the batch on the chosen device. The result does not
// depend on the device, on `threads` (CPU worker threads, 0 = all cores) or
// on how jobs are grouped into batches. Throws DeviceError on a CUDA failure
// or when kCuda is asked for without a usable GPU.
void shuffle_records(Device device, std::span<const ShuffleJob> jobs, std::size_t record_size,
                     int threads = 0);

// Convenience: one job.
inline void shuffle_records(Device device, const ShuffleJob& job, std::size_t record_size,
                            int threads = 0) {
  shuffle_records(device, std::span<const ShuffleJob>(&job, 1), record_size, threads);
}

// True when the CUDA back end is compiled in and a GPU can be used.
// The CPU worker threads a run uses: `requested` when positive, else every
// core OpenMP may use (OMP_NUM_THREADS and the process's CPU affinity, so a
// cgroup's cpuset, count). The one place "all cores" is decided: the CLI, the
// walk and the CPU back end all ask here.
int resolve_threads(int requested);

bool cuda_available();
// Why cuda_available() is false ("" when it is true).
std::string cuda_unavailable_reason();
// Throws DeviceError ("CUDA device requested: <why>") when `device` is the
// GPU and none is usable. The CLI asks before any input is read (docs/cli.md,
// --device); the back end's entry points ask again.
void require_usable(Device device);

}  // namespace extshuffle::device
