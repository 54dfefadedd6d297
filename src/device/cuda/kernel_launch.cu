// The dispatch layer: kernel choice and launches (kernel_launch.hpp).
#include "device/cuda/kernel_launch.hpp"

#include <algorithm>
#include <climits>
#include <cstring>
#include <vector>

#include "device/cuda/bijective_shuffle_kernels.cuh"
#include "device/cuda/cuda_resources.hpp"
#include "device/cuda/node_kernels.cuh"

namespace extshuffle::device::cuda {
namespace {

namespace k = kernels;

// Most tiles of one single-pass launch: CUB sizes the look-back state in int
// arithmetic (16 bytes a tile); 2^26 tiles of 4096 is a 2^38 domain.
constexpr std::uint64_t kMaxLaunchTiles = std::uint64_t{1} << 26;
// Largest grid.x of one launch.
constexpr std::uint64_t kMaxGridBlocks = static_cast<std::uint64_t>(INT_MAX);
// Blocks of the scatter and iota kernels (each strides over its work).
constexpr unsigned kCopyBlocks = 4096;
constexpr unsigned kCopyThreads = 256;

std::uint64_t tile_state_bytes(std::uint64_t tiles) {
  std::size_t bytes = 0;
  check(k::TileStateT::AllocationSize(static_cast<int>(tiles), bytes), "ScanTileState::AllocationSize");
  return round_up(bytes, kAllocationAlignment) + kAllocationAlignment;  // + tile counter
}

std::uint64_t tiles_of(const LaunchJob& job) { return k::tiles_for_domain(job.bijection.domain_size()); }

std::uint64_t batch_min_jobs(const KernelChoice& choice) {
  if (choice.batch_min_jobs > 0) return choice.batch_min_jobs;
  int device = 0;
  int sms = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "cudaDeviceGetAttribute");
  return 2 * static_cast<std::uint64_t>(sms);
}

// Copies `bytes` of host data to a fresh device allocation through one
// pinned slot, all on `stream`. The slot is free again once the copy is done.
DeviceBuffer upload(const void* data, std::size_t bytes, PinnedRing& descriptors, cudaStream_t stream) {
  DeviceBuffer d(bytes, stream);
  PinnedRing::Slot& slot = descriptors.take();
  std::memcpy(slot.data, data, bytes);
  check(cudaMemcpyAsync(d.bytes(), slot.data, bytes, cudaMemcpyHostToDevice, stream), "cudaMemcpyAsync");
  slot.done.record(stream);
  slot.busy = true;
  return d;
}

// Calls body(copier) with the copy path for record_size: vector moves for
// 1, 2, 4, 8 and 16 bytes, the generic path otherwise.
template <class Body>
void with_records(std::size_t record_size, Body&& body) {
  switch (record_size) {
    case 1: return body(k::TypedRecords<unsigned char>{});
    case 2: return body(k::TypedRecords<unsigned short>{});
    case 4: return body(k::TypedRecords<unsigned int>{});
    case 8: return body(k::TypedRecords<unsigned long long>{});
    case 16: return body(k::TypedRecords<uint4>{});
    default: return body(k::GenericRecords{record_size});
  }
}

// One launch of the batched kernel over jobs that fit one descriptor slot.
template <class Records>
void launch_batch(std::span<const LaunchJob> jobs, const std::byte* d_input, std::byte* d_output, Records copier,
                  PinnedRing& descriptors, cudaStream_t stream) {
  std::vector<k::KernelJob> host(jobs.size());
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    host[j] = {k::make_bijection_params(jobs[j].bijection), jobs[j].records, jobs[j].offset_bytes};
  }
  DeviceBuffer d_jobs = upload(host.data(), host.size() * sizeof(k::KernelJob), descriptors, stream);
  k::shuffle_batch_kernel<Records><<<static_cast<unsigned>(jobs.size()), k::kBlockThreads, 0, stream>>>(
      reinterpret_cast<const k::KernelJob*>(d_jobs.bytes()), d_input, d_output, copier);
  check_launch("shuffle_batch_kernel");
}

// One launch of the single-pass kernel over jobs whose tiles and
// descriptors fit one launch.
template <class Records>
void launch_tiles(std::span<const LaunchJob> jobs, const std::byte* d_input, std::byte* d_output, Records copier,
                  PinnedRing& descriptors, cudaStream_t stream) {
  const std::size_t jobs_bytes = round_up(jobs.size() * sizeof(k::KernelJob), kAllocationAlignment);
  std::vector<std::byte> host(jobs_bytes + (jobs.size() + 1) * sizeof(std::uint64_t));
  auto* first_tiles = reinterpret_cast<std::uint64_t*>(host.data() + jobs_bytes);
  std::uint64_t tiles = 0;
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    const k::KernelJob job{k::make_bijection_params(jobs[j].bijection), jobs[j].records, jobs[j].offset_bytes};
    std::memcpy(host.data() + j * sizeof(k::KernelJob), &job, sizeof(job));
    first_tiles[j] = tiles;
    tiles += tiles_of(jobs[j]);
  }
  first_tiles[jobs.size()] = tiles;
  DeviceBuffer d_jobs = upload(host.data(), host.size(), descriptors, stream);
  const std::uint64_t state_bytes = tile_state_bytes(tiles);
  DeviceBuffer d_state(state_bytes, stream);
  const std::uint64_t counter_offset = state_bytes - kAllocationAlignment;
  k::TileStateT tile_state;
  check(tile_state.Init(static_cast<int>(tiles), d_state.bytes(), counter_offset), "ScanTileState::Init");
  auto* counter = reinterpret_cast<unsigned int*>(d_state.bytes() + counter_offset);
  const std::uint64_t init_blocks = (tiles + k::kBlockThreads - 1) / k::kBlockThreads;
  k::init_lookback_kernel<<<static_cast<unsigned>(init_blocks), k::kBlockThreads, 0, stream>>>(
      tile_state, static_cast<int>(tiles), counter);
  check_launch("init_lookback_kernel");
  k::shuffle_tiles_kernel<Records><<<static_cast<unsigned>(tiles), k::kBlockThreads, 0, stream>>>(
      reinterpret_cast<const k::KernelJob*>(d_jobs.bytes()),
      reinterpret_cast<const std::uint64_t*>(d_jobs.bytes() + jobs_bytes), static_cast<std::uint32_t>(jobs.size()),
      d_input, d_output, copier, tile_state, counter);
  check_launch("shuffle_tiles_kernel");
}

// Cuts `jobs` into launches that fit a descriptor slot (and, for the
// single-pass kernel, the launch's tile limit), in order.
template <class Launch>
void in_launches(std::span<const LaunchJob> jobs, std::size_t slot_bytes, bool tiles_kernel, Launch&& launch) {
  const std::size_t per_job = sizeof(k::KernelJob) + (tiles_kernel ? sizeof(std::uint64_t) : 0);
  const std::size_t max_jobs = std::max<std::size_t>(1, (slot_bytes - 2 * kAllocationAlignment) / per_job);
  std::size_t first = 0;
  while (first < jobs.size()) {
    std::size_t end = first;
    std::uint64_t tiles = 0;
    while (end < jobs.size() && end - first < max_jobs) {
      const std::uint64_t t = tiles_of(jobs[end]);
      if (tiles_kernel && end > first && tiles + t > kMaxLaunchTiles) break;
      tiles += t;
      ++end;
    }
    launch(jobs.subspan(first, end - first));
    first = end;
  }
}

}  // namespace

void launch_shuffles(std::span<const LaunchJob> jobs, const std::byte* d_input, std::byte* d_output,
                     std::size_t record_size, PinnedRing& descriptors, cudaStream_t stream,
                     const KernelChoice& choice) {
  std::vector<LaunchJob> batched;
  std::vector<LaunchJob> tiled;
  for (const LaunchJob& job : jobs) {
    if (job.records == 0) continue;
    if (tiles_of(job) > kMaxLaunchTiles) {
      throw DeviceError("CUDA shuffle: job domain of " + std::to_string(job.bijection.domain_size()) +
                        " indices needs more tiles than one launch can have");
    }
    (job.bijection.domain_size() <= choice.batch_max_domain ? batched : tiled).push_back(job);
  }
  if (!batched.empty() && batched.size() < batch_min_jobs(choice)) {
    tiled.insert(tiled.end(), batched.begin(), batched.end());
    batched.clear();
  }
  with_records(record_size, [&](auto copier) {
    in_launches(batched, descriptors.slot_bytes(), false, [&](std::span<const LaunchJob> part) {
      for (std::size_t first = 0; first < part.size(); first += kMaxGridBlocks) {
        launch_batch(part.subspan(first, std::min<std::size_t>(kMaxGridBlocks, part.size() - first)), d_input,
                     d_output, copier, descriptors, stream);
      }
    });
    in_launches(tiled, descriptors.slot_bytes(), true, [&](std::span<const LaunchJob> part) {
      launch_tiles(part, d_input, d_output, copier, descriptors, stream);
    });
  });
}

std::uint64_t launch_scratch_bytes(std::span<const LaunchJob> jobs) {
  std::uint64_t tiles = 0;
  for (const LaunchJob& job : jobs) tiles += job.records > 0 ? tiles_of(job) : 0;
  // Launches run one after another; their scratch is freed stream-ordered,
  // so at most two launches' worth is held at once: bound it by two of the
  // whole set, plus descriptors.
  return 2 * (tile_state_bytes(std::min(std::max<std::uint64_t>(tiles, 1), kMaxLaunchTiles)) +
              jobs.size() * (sizeof(k::KernelJob) + sizeof(std::uint64_t)) + 4 * kAllocationAlignment);
}

void launch_scatter(std::span<const Slice> slices, const std::byte* d_from, std::byte* d_to, std::size_t record_size,
                    PinnedRing& descriptors, cudaStream_t stream) {
  static_assert(sizeof(Slice) == sizeof(k::SliceCopy));
  const std::size_t per_launch = std::max<std::size_t>(1, descriptors.slot_bytes() / sizeof(Slice));
  for (std::size_t first = 0; first < slices.size(); first += per_launch) {
    const std::size_t count = std::min(per_launch, slices.size() - first);
    DeviceBuffer d_slices = upload(slices.data() + first, count * sizeof(Slice), descriptors, stream);
    const auto* s = reinterpret_cast<const k::SliceCopy*>(d_slices.bytes());
    const unsigned blocks = static_cast<unsigned>(std::min<std::size_t>(kCopyBlocks, count));
    const std::uint64_t r = record_size;
    if (r % 16 == 0) {
      k::scatter_slices_kernel<uint4><<<blocks, kCopyThreads, 0, stream>>>(s, count, d_from, d_to, r);
    } else if (r % 8 == 0) {
      k::scatter_slices_kernel<unsigned long long><<<blocks, kCopyThreads, 0, stream>>>(s, count, d_from, d_to, r);
    } else if (r % 4 == 0) {
      k::scatter_slices_kernel<unsigned int><<<blocks, kCopyThreads, 0, stream>>>(s, count, d_from, d_to, r);
    } else if (r % 2 == 0) {
      k::scatter_slices_kernel<unsigned short><<<blocks, kCopyThreads, 0, stream>>>(s, count, d_from, d_to, r);
    } else {
      k::scatter_slices_kernel<unsigned char><<<blocks, kCopyThreads, 0, stream>>>(s, count, d_from, d_to, r);
    }
    check_launch("scatter_slices_kernel");
  }
}

void launch_iota(std::uint32_t* d_values, std::uint64_t n, cudaStream_t stream) {
  if (n == 0) return;
  const std::uint64_t blocks = std::min<std::uint64_t>(kCopyBlocks * 16, (n + kCopyThreads - 1) / kCopyThreads);
  k::iota_kernel<<<static_cast<unsigned>(blocks), kCopyThreads, 0, stream>>>(d_values, n);
  check_launch("iota_kernel");
}

bool kernels_loadable(std::string& why) {
  cudaFuncAttributes attributes{};
  const cudaError_t error =
      cudaFuncGetAttributes(&attributes, k::shuffle_tiles_kernel<k::TypedRecords<unsigned long long>>);
  if (error == cudaSuccess) return true;
  cudaGetLastError();
  why = std::string("CUDA cudaFuncGetAttributes: ") + cudaGetErrorString(error);
  return false;
}

}  // namespace extshuffle::device::cuda
