// The CUDA back end when the build has none (EXTSHUFFLE_CUDA=OFF or no nvcc).
#include "cuda_backend.hpp"
#include "extshuffle/device/device_error.hpp"

namespace extshuffle::device {

bool cuda_available() { return false; }
std::string cuda_unavailable_reason() { return "this build has no CUDA back end"; }

namespace cuda {
void shuffle_records_cuda(std::span<const ShuffleJob>, std::size_t) {
  throw DeviceError("CUDA device requested: this build has no CUDA back end");
}
std::byte* allocate_pinned(std::size_t) {
  throw DeviceError("CUDA device requested: this build has no CUDA back end");
}
void free_pinned(std::byte*) {}
}  // namespace cuda

}  // namespace extshuffle::device
