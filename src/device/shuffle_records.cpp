// Dispatch of the device layer to the CPU or CUDA back end.
#include "extshuffle/device/shuffle_records.hpp"

#include <omp.h>

#include "cpu/shuffle_records_cpu.hpp"
#include "cuda_backend.hpp"
#include "extshuffle/device/device_error.hpp"

namespace extshuffle::device {

int resolve_threads(int requested) { return requested > 0 ? requested : omp_get_max_threads(); }

void require_usable(Device device) {
  if (device == Device::kCuda && !cuda_available()) {
    throw DeviceError("CUDA device requested: " + cuda_unavailable_reason());
  }
}

void shuffle_records(Device device, std::span<const ShuffleJob> jobs, std::size_t record_size,
                     int threads) {
  if (device == Device::kCuda) {
    require_usable(device);
    cuda::shuffle_records_cuda(jobs, record_size, resolve_threads(threads));
    return;
  }
  cpu::shuffle_records_cpu(jobs, record_size, threads);
}

}  // namespace extshuffle::device
