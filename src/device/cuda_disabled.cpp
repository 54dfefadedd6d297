// The CUDA back end when the build has none (EXTSHUFFLE_CUDA=OFF or no nvcc).
#include "cuda_backend.hpp"
#include <string>

#include "extshuffle/device/device_error.hpp"

namespace extshuffle::device {

namespace {
constexpr const char* kNoBackEnd = "this build has no CUDA back end";
[[noreturn]] void no_back_end() { throw DeviceError(std::string("CUDA device requested: ") + kNoBackEnd); }
}  // namespace

bool cuda_available() { return false; }
std::string cuda_unavailable_reason() { return kNoBackEnd; }

namespace cuda {
void shuffle_records_cuda(std::span<const ShuffleJob>, std::size_t, int) { no_back_end(); }
StagingConfig staging_config() { no_back_end(); }
void configure_staging(const StagingConfig&) { no_back_end(); }
std::uint64_t device_memory_budget_bytes() { return 0; }
void run_node_cuda(const NodeTransfer&, const std::function<void(NodeSteps&)>&) { no_back_end(); }
}  // namespace cuda

}  // namespace extshuffle::device
