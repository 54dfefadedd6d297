// How a call's jobs are cut into units of work for the GPU (docs/conventions.md, Devices):
// consecutive jobs packed tightly, in job order, into one device layout of
// at most unit_bytes (a larger job is a unit of its own) and unit_jobs jobs;
// the host ranges of their inputs and outputs, adjacent ones merged (the
// chunks of one host buffer are one range). Pure host arithmetic, tested on
// the CPU (tests/device/cuda_unit_plan_test.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "device/cuda/kernel_launch.hpp"
#include "device/cuda/transfers.hpp"
#include "extshuffle/device/shuffle_records.hpp"

namespace extshuffle::device::cuda {

struct Unit {
  std::vector<LaunchJob> jobs;      // offset_bytes: packed from 0 in job order
  std::vector<HostRange> inputs;    // in device order
  std::vector<HostRange> outputs;   // in device order
  std::uint64_t bytes = 0;          // the unit's data bytes (each of input and output)
};

// Throws DeviceError for a job the back end cannot run (a null pointer, a
// size overflowing 64 bits, a bijection outside the supported rounds and
// widths or with a domain smaller than its records). Jobs of 0 records are
// skipped.
std::vector<Unit> plan_units(std::span<const ShuffleJob> jobs, std::size_t record_size, std::uint64_t unit_bytes,
                             std::size_t unit_jobs);

}  // namespace extshuffle::device::cuda
