// The CUDA back end's entry points (cuda_backend.hpp): whether a GPU is
// usable, the staging configuration and the device budget. The work itself
// is in batch_pipeline.cpp (shuffle_records) and node_steps.cpp (whole nodes).
#include "device/cuda_backend.hpp"

#include <cuda_runtime.h>
#include <dlfcn.h>

#include <string>

#include "device/cuda/cuda_resources.hpp"
#include "device/cuda/kernel_launch.hpp"
#include "device/cuda/session.hpp"
#include "extshuffle/device/device_error.hpp"

#ifndef EXTSHUFFLE_CUDA_ARCHITECTURES
#define EXTSHUFFLE_CUDA_ARCHITECTURES "unknown"
#endif

namespace extshuffle::device {
namespace cuda {
namespace {

struct Availability {
  bool available = false;
  std::string reason;
};

// The runtime is linked statically; the driver (libcuda.so.1) comes with the
// GPU's kernel module and is loaded at run time. Without it the runtime only
// says its version is "insufficient", which hides the real cause.
bool driver_library_present() {
  void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (driver == nullptr) return false;
  dlclose(driver);
  return true;
}

Availability probe() {
  if (!driver_library_present()) return {false, "no NVIDIA driver found (libcuda.so.1 cannot be loaded)"};
  int count = 0;
  cudaError_t error = cudaGetDeviceCount(&count);
  if (error != cudaSuccess) {
    cudaGetLastError();
    return {false, std::string("CUDA cudaGetDeviceCount: ") + cudaGetErrorString(error)};
  }
  if (count == 0) return {false, "no CUDA device found"};
  // A device in use by another process in exclusive mode, or prohibited,
  // fails here rather than at the first allocation.
  error = cudaFree(nullptr);
  if (error != cudaSuccess) {
    cudaGetLastError();
    return {false, std::string("CUDA context creation: ") + cudaGetErrorString(error)};
  }
  // A GPU this build has no code for fails here rather than at the first launch.
  std::string why;
  if (!kernels_loadable(why)) {
    int device = 0;
    int major = 0;
    int minor = 0;
    cudaGetDevice(&device);
    cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device);
    cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device);
    cudaGetLastError();
    return {false, why + " (GPU compute capability " + std::to_string(major) + "." + std::to_string(minor) +
                       ", built for CUDA architectures " + EXTSHUFFLE_CUDA_ARCHITECTURES + ")"};
  }
  return {true, ""};
}

const Availability& availability() {
  static const Availability instance = probe();
  return instance;
}

void require_gpu() {
  if (!availability().available) throw DeviceError("CUDA device requested: " + availability().reason);
}

}  // namespace

StagingConfig staging_config() {
  require_gpu();
  auto lock = Session::lock();
  return Session::get().config();
}

void configure_staging(const StagingConfig& config) {
  require_gpu();
  auto lock = Session::lock();
  Session::get().configure(config);
}

std::uint64_t device_memory_budget_bytes() {
  if (!availability().available) return 0;
  auto lock = Session::lock();
  return device_memory_budget();
}

}  // namespace cuda

bool cuda_available() { return cuda::availability().available; }

std::string cuda_unavailable_reason() { return cuda::availability().reason; }

}  // namespace extshuffle::device
