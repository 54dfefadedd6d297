// The CUDA back end's staging for a test: a tiny configuration, so that every
// copy wraps the pinned ring many times, every call makes many units and every
// step needs several launches, and a guard that restores the default.
#pragma once

#include "device/cuda_backend.hpp"

namespace extshuffle::testing {

inline device::cuda::StagingConfig tiny_staging() {
  device::cuda::StagingConfig tiny;
  tiny.slot_bytes = 4096;
  tiny.slots = 3;
  tiny.descriptor_slot_bytes = 4096;  // ~20 kernel jobs or 170 slices a launch
  tiny.descriptor_slots = 2;
  tiny.unit_bytes = 1 << 16;
  tiny.unit_jobs = 7;
  tiny.node_group_bytes = 8192;
  return tiny;
}

// Runs the body with the back end's staging set to `config`, then restores it.
template <class Body>
void with_staging(const device::cuda::StagingConfig& config, Body&& body) {
  const device::cuda::StagingConfig saved = device::cuda::staging_config();
  device::cuda::configure_staging(config);
  try {
    body();
  } catch (...) {
    device::cuda::configure_staging(saved);
    throw;
  }
  device::cuda::configure_staging(saved);
}

}  // namespace extshuffle::testing
