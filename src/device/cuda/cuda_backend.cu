// The CUDA back end of the device layer (DESIGN.md 3): host dispatch only.
//
// It plans the jobs of a call into groups that fit in device memory, packs
// each group's inputs into one device buffer (and outputs into another, same
// layout), copies them in, launches the kernels of bijective_shuffle_kernels.cuh
// (kernel (a) per large job, kernel (b) once for all other jobs), and copies
// the outputs back, all on one stream of its own. Every CUDA call is checked
// and a failure throws DeviceError("CUDA <call>: <CUDA text>"); nothing falls
// back to the CPU. The result is byte-identical to the CPU back end.
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "device/cuda/bijective_shuffle_kernels.cuh"
#include "device/cuda/cuda_resources.cuh"
#include "device/cuda_backend.hpp"
#include "extshuffle/device/device_error.hpp"

#ifndef EXTSHUFFLE_CUDA_ARCHITECTURES
#define EXTSHUFFLE_CUDA_ARCHITECTURES "unknown"
#endif

namespace extshuffle::device {
namespace cuda {
namespace {

namespace k = kernels;

// Jobs whose domain is larger than this run alone on kernel (a); the others
// share one launch of kernel (b), one block per job walking its tiles in turn.
// The plan's chunks and largest leaves hold L = 2^20 records (core::kPlanV2),
// so they take kernel (a); kernel (b) takes the smaller leaves and short last
// chunks, up to 2^17 records. Provisional until chosen by
// bench/cuda_shuffle_bench.cu (shuffle_batch vs shuffle_single lines), whose
// kernel (b) line still uses leaves of 2^16.
constexpr std::uint64_t kBatchMaxDomain = std::uint64_t{1} << 17;

// Device memory left unplanned for the CUDA context's own needs and for
// other users of the GPU.
constexpr std::uint64_t kDeviceMemoryReserveBytes = std::uint64_t{256} << 20;

// Largest grid.x of one launch.
constexpr std::uint64_t kMaxGridBlocks = static_cast<std::uint64_t>(INT_MAX);

// Most tiles of one kernel (a) launch: CUB sizes the look-back state in int
// arithmetic (16 bytes a tile). 2^26 tiles of 4096 is a 2^38 domain, more
// records than any GPU memory holds.
constexpr std::uint64_t kMaxSingleTiles = std::uint64_t{1} << 26;


// A job as planned: where its records go on the device and which kernel runs it.
struct PlannedJob {
  const ShuffleJob* job = nullptr;
  std::uint64_t bytes = 0;   // records * record_size
  std::uint64_t domain = 0;  // 2^k of its bijection
  bool single = false;       // kernel (a) rather than kernel (b)
  std::uint64_t offset = 0;  // byte offset in the group's buffers
};

// Jobs that run together: one input and one output buffer, packed tightly in
// job order (each offset is a multiple of the record size, so every record is
// as aligned as the kernels' copy paths need).
struct Group {
  std::vector<PlannedJob> jobs;
  std::uint64_t data_bytes = 0;
  std::uint64_t batch_jobs = 0;
  std::uint64_t max_single_tiles = 0;
};

std::uint64_t tile_state_bytes(std::uint64_t tiles) {
  std::size_t bytes = 0;
  check(k::TileStateT::AllocationSize(static_cast<int>(tiles), bytes), "ScanTileState::AllocationSize");
  return round_up(bytes, kAllocationAlignment) + kAllocationAlignment;  // + tile counter
}

// Device bytes a group with these totals needs.
std::uint64_t footprint(std::uint64_t data_bytes, std::uint64_t batch_jobs,
                        std::uint64_t max_single_tiles) {
  std::uint64_t bytes = 2 * round_up(data_bytes, kAllocationAlignment);
  bytes += round_up(batch_jobs * sizeof(k::BatchJob), kAllocationAlignment);
  if (max_single_tiles > 0) bytes += tile_state_bytes(max_single_tiles);
  return bytes;
}

// Bytes this call may plan on: free device memory plus what the pool holds
// unused, less a reserve.
std::uint64_t device_memory_budget() {
  std::size_t free_bytes = 0;
  std::size_t total_bytes = 0;
  check(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
  std::uint64_t available = free_bytes;
  const Context& c = context();
  if (c.pooled) {
    std::uint64_t reserved = 0;
    std::uint64_t used = 0;
    check(cudaMemPoolGetAttribute(c.pool, cudaMemPoolAttrReservedMemCurrent, &reserved),
          "cudaMemPoolGetAttribute");
    check(cudaMemPoolGetAttribute(c.pool, cudaMemPoolAttrUsedMemCurrent, &used),
          "cudaMemPoolGetAttribute");
    if (reserved > used) available += reserved - used;
  }
  return available > kDeviceMemoryReserveBytes ? available - kDeviceMemoryReserveBytes : 0;
}

// Checks one job and decides its kernel.
PlannedJob plan_job(const ShuffleJob& job, std::size_t record_size, bool alone) {
  PlannedJob p;
  p.job = &job;
  if (job.records > std::numeric_limits<std::uint64_t>::max() / record_size) {
    throw DeviceError("CUDA shuffle: job of " + std::to_string(job.records) + " records of " +
                      std::to_string(record_size) + " bytes overflows 64-bit sizes");
  }
  p.bytes = job.records * record_size;
  if (job.input == nullptr || job.output == nullptr) {
    throw DeviceError("CUDA shuffle: job of " + std::to_string(job.records) +
                      " records has a null input or output pointer");
  }
  const core::VariablePhilox& f = job.bijection;
  if (f.rounds() < 0 || f.rounds() > core::kVariablePhiloxMaxRounds ||
      f.domain_bits() > core::kMaxDomainBits) {
    throw DeviceError("CUDA shuffle: job bijection with " + std::to_string(f.rounds()) +
                      " rounds and a 2^" + std::to_string(f.domain_bits()) +
                      " domain is outside the supported range");
  }
  p.domain = f.domain_size();
  if (p.domain < job.records) {
    throw DeviceError("CUDA shuffle: job of " + std::to_string(job.records) +
                      " records has a bijection domain of only " + std::to_string(p.domain));
  }
  // A lone job gets the whole GPU through kernel (a) unless it is one tile.
  p.single = p.domain > kBatchMaxDomain ||
             (alone && p.domain > static_cast<std::uint64_t>(k::kTileItems));
  if (p.single && k::tiles_for_domain(p.domain) > kMaxSingleTiles) {
    throw DeviceError("CUDA shuffle: job domain of " + std::to_string(p.domain) +
                      " indices needs more tiles than one launch can have");
  }
  return p;
}

// 1. Validate the jobs and split them, in order, into groups that fit the
//    device's memory.
std::vector<Group> plan_groups(std::span<const ShuffleJob> jobs, std::size_t record_size) {
  std::size_t active = 0;
  for (const ShuffleJob& job : jobs) active += job.records > 0 ? 1 : 0;
  const std::uint64_t budget = device_memory_budget();

  std::vector<Group> groups;
  Group current;
  for (const ShuffleJob& job : jobs) {
    if (job.records == 0) continue;
    PlannedJob p = plan_job(job, record_size, active == 1);
    const std::uint64_t tiles = p.single ? k::tiles_for_domain(p.domain) : 0;
    const std::uint64_t batch_add = p.single ? 0 : 1;
    const std::uint64_t alone = footprint(p.bytes, batch_add, tiles);
    if (alone > budget) {
      throw DeviceError("CUDA shuffle: a job of " + std::to_string(job.records) + " records of " +
                        std::to_string(record_size) + " bytes needs " + std::to_string(alone) +
                        " bytes of device memory, " + std::to_string(budget) + " available");
    }
    const std::uint64_t together =
        footprint(current.data_bytes + p.bytes, current.batch_jobs + batch_add,
                  std::max(current.max_single_tiles, tiles));
    if (!current.jobs.empty() && together > budget) {
      groups.push_back(std::move(current));
      current = Group{};
    }
    p.offset = current.data_bytes;
    current.data_bytes += p.bytes;
    current.batch_jobs += batch_add;
    current.max_single_tiles = std::max(current.max_single_tiles, tiles);
    current.jobs.push_back(p);
  }
  if (!current.jobs.empty()) groups.push_back(std::move(current));
  return groups;
}

// One host <-> device copy covering consecutive jobs whose host ranges are
// adjacent too (chunks of one host buffer become one transfer).
struct CopyRange {
  std::byte* host = nullptr;
  std::uint64_t device_offset = 0;
  std::uint64_t bytes = 0;
};

template <class HostPointerOf>
std::vector<CopyRange> copy_ranges(const Group& g, HostPointerOf host_pointer_of) {
  std::vector<CopyRange> ranges;
  for (const PlannedJob& p : g.jobs) {
    std::byte* host = host_pointer_of(*p.job);
    if (!ranges.empty()) {
      CopyRange& last = ranges.back();
      if (last.host + last.bytes == host && last.device_offset + last.bytes == p.offset) {
        last.bytes += p.bytes;
        continue;
      }
    }
    ranges.push_back({host, p.offset, p.bytes});
  }
  return ranges;
}

// 2. Run one group: copy in, launch, copy out, wait.
template <class Records>
void run_group(const Group& g, Records copier, cudaStream_t stream) {
  DeviceBuffer d_input(round_up(g.data_bytes, kAllocationAlignment), stream);
  DeviceBuffer d_output(round_up(g.data_bytes, kAllocationAlignment), stream);

  // 2a. Inputs in.
  const auto inputs = copy_ranges(g, [](const ShuffleJob& job) {
    return const_cast<std::byte*>(job.input);
  });
  for (const CopyRange& r : inputs) {
    check(cudaMemcpyAsync(d_input.bytes() + r.device_offset, r.host, r.bytes,
                          cudaMemcpyHostToDevice, stream),
          "cudaMemcpyAsync");
  }

  // 2b. Kernel (b) for all batched jobs at once.
  std::vector<k::BatchJob> batch;
  batch.reserve(g.batch_jobs);
  for (const PlannedJob& p : g.jobs) {
    if (!p.single) batch.push_back({k::make_bijection_params(p.job->bijection), p.job->records, p.offset});
  }
  DeviceBuffer d_batch(batch.size() * sizeof(k::BatchJob), stream);
  if (!batch.empty()) {
    check(cudaMemcpyAsync(d_batch.bytes(), batch.data(), batch.size() * sizeof(k::BatchJob),
                          cudaMemcpyHostToDevice, stream),
          "cudaMemcpyAsync");
    const auto* d_jobs = reinterpret_cast<const k::BatchJob*>(d_batch.bytes());
    for (std::uint64_t first = 0; first < batch.size(); first += kMaxGridBlocks) {
      const auto blocks = static_cast<unsigned>(std::min<std::uint64_t>(kMaxGridBlocks, batch.size() - first));
      k::shuffle_batch_kernel<Records><<<blocks, k::kBlockThreads, 0, stream>>>(
          d_jobs + first, d_input.bytes(), d_output.bytes(), copier);
      check_launch("shuffle_batch_kernel");
    }
  }

  // 2c. Kernel (a) for each large job, one after another on the stream,
  //     sharing one look-back state (re-initialised before each).
  const std::uint64_t state_bytes = g.max_single_tiles > 0 ? tile_state_bytes(g.max_single_tiles) : 0;
  DeviceBuffer d_state(state_bytes, stream);
  for (const PlannedJob& p : g.jobs) {
    if (!p.single) continue;
    const std::uint64_t tiles = k::tiles_for_domain(p.domain);
    const std::uint64_t counter_offset = state_bytes - kAllocationAlignment;
    k::TileStateT tile_state;
    check(tile_state.Init(static_cast<int>(tiles), d_state.bytes(), counter_offset),
          "ScanTileState::Init");
    auto* counter = reinterpret_cast<unsigned int*>(d_state.bytes() + counter_offset);
    const std::uint64_t init_blocks = (tiles + k::kBlockThreads - 1) / k::kBlockThreads;
    k::init_lookback_kernel<<<static_cast<unsigned>(init_blocks), k::kBlockThreads, 0, stream>>>(
        tile_state, static_cast<int>(tiles), counter);
    check_launch("init_lookback_kernel");
    k::shuffle_single_kernel<Records><<<static_cast<unsigned>(tiles), k::kBlockThreads, 0, stream>>>(
        k::make_bijection_params(p.job->bijection), p.job->records, d_input.bytes() + p.offset,
        d_output.bytes() + p.offset, copier, tile_state, counter);
    check_launch("shuffle_single_kernel");
  }

  // 2d. Outputs back, then wait: kernel faults surface here.
  const auto outputs = copy_ranges(g, [](const ShuffleJob& job) { return job.output; });
  for (const CopyRange& r : outputs) {
    check(cudaMemcpyAsync(r.host, d_output.bytes() + r.device_offset, r.bytes,
                          cudaMemcpyDeviceToHost, stream),
          "cudaMemcpyAsync");
  }
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
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

struct Availability {
  bool available = false;
  std::string reason;
};

Availability probe() {
  int count = 0;
  cudaError_t error = cudaGetDeviceCount(&count);
  if (error != cudaSuccess) {
    cudaGetLastError();
    return {false, std::string("CUDA cudaGetDeviceCount: ") + cudaGetErrorString(error)};
  }
  if (count == 0) return {false, "no CUDA device found"};
  // A GPU this build has no code for fails here rather than at the first launch.
  cudaFuncAttributes attributes{};
  error = cudaFuncGetAttributes(&attributes, k::shuffle_batch_kernel<k::TypedRecords<unsigned long long>>);
  if (error != cudaSuccess) {
    cudaGetLastError();
    int device = 0;
    int major = 0;
    int minor = 0;
    cudaGetDevice(&device);
    cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device);
    cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device);
    cudaGetLastError();
    return {false, std::string("CUDA cudaFuncGetAttributes: ") + cudaGetErrorString(error) +
                       " (GPU compute capability " + std::to_string(major) + "." +
                       std::to_string(minor) + ", built for CUDA architectures " +
                       EXTSHUFFLE_CUDA_ARCHITECTURES + ")"};
  }
  return {true, ""};
}

const Availability& availability() {
  static const Availability instance = probe();
  return instance;
}

}  // namespace

void shuffle_records_cuda(std::span<const ShuffleJob> jobs, std::size_t record_size) {
  if (record_size == 0) return;
  bool any = false;
  for (const ShuffleJob& job : jobs) any = any || job.records > 0;
  if (!any) return;
  if (!availability().available) {
    throw DeviceError("CUDA device requested: " + availability().reason);
  }
  cudaGetLastError();  // a stale error of an earlier call must not fail our launch checks
  const std::vector<Group> groups = plan_groups(jobs, record_size);
  StreamGuard stream;
  with_records(record_size, [&](auto copier) {
    for (const Group& g : groups) run_group(g, copier, stream.get());
  });
}

std::byte* allocate_pinned(std::size_t bytes) {
  if (!availability().available) throw DeviceError("CUDA device requested: " + availability().reason);
  void* memory = nullptr;
  check(cudaHostAlloc(&memory, bytes, cudaHostAllocDefault), "cudaHostAlloc");
  return static_cast<std::byte*>(memory);
}

void free_pinned(std::byte* memory) { cudaFreeHost(memory); }

}  // namespace cuda

bool cuda_available() { return cuda::availability().available; }

std::string cuda_unavailable_reason() { return cuda::availability().reason; }

}  // namespace extshuffle::device
