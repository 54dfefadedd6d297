#include "device/cuda/unit_plan.hpp"

#include <limits>
#include <string>

#include "extshuffle/device/device_error.hpp"

namespace extshuffle::device::cuda {
namespace {

std::uint64_t checked_bytes(const ShuffleJob& job, std::size_t record_size) {
  if (job.records > std::numeric_limits<std::uint64_t>::max() / record_size) {
    throw DeviceError("CUDA shuffle: job of " + std::to_string(job.records) + " records of " +
                      std::to_string(record_size) + " bytes overflows 64-bit sizes");
  }
  if (job.input == nullptr || job.output == nullptr) {
    throw DeviceError("CUDA shuffle: job of " + std::to_string(job.records) +
                      " records has a null input or output pointer");
  }
  const core::VariablePhilox& f = job.bijection;
  if (f.rounds() < 0 || f.rounds() > core::kVariablePhiloxMaxRounds || f.domain_bits() > core::kMaxDomainBits) {
    throw DeviceError("CUDA shuffle: job bijection with " + std::to_string(f.rounds()) + " rounds and a 2^" +
                      std::to_string(f.domain_bits()) + " domain is outside the supported range");
  }
  if (f.domain_size() < job.records) {
    throw DeviceError("CUDA shuffle: job of " + std::to_string(job.records) +
                      " records has a bijection domain of only " + std::to_string(f.domain_size()));
  }
  return job.records * record_size;
}

// Appends [host, host + bytes) at device offset `at`, merged with the last
// range when both host and device bytes continue it.
void append_range(std::vector<HostRange>& ranges, std::byte* host, std::uint64_t at, std::uint64_t bytes) {
  if (!ranges.empty()) {
    HostRange& last = ranges.back();
    if (last.host + last.bytes == host && last.device_offset + last.bytes == at) {
      last.bytes += bytes;
      return;
    }
  }
  ranges.push_back({host, at, bytes});
}

}  // namespace

std::vector<Unit> plan_units(std::span<const ShuffleJob> jobs, std::size_t record_size, std::uint64_t unit_bytes,
                             std::size_t unit_jobs) {
  std::vector<Unit> units;
  Unit current;
  for (const ShuffleJob& job : jobs) {
    if (job.records == 0) continue;
    const std::uint64_t bytes = checked_bytes(job, record_size);
    if (!current.jobs.empty() && (current.bytes + bytes > unit_bytes || current.jobs.size() == unit_jobs)) {
      units.push_back(std::move(current));
      current = Unit{};
    }
    const std::uint64_t at = current.bytes;
    current.jobs.push_back({job.bijection, job.records, at});
    append_range(current.inputs, const_cast<std::byte*>(job.input), at, bytes);
    append_range(current.outputs, job.output, at, bytes);
    current.bytes += bytes;
  }
  if (!current.jobs.empty()) units.push_back(std::move(current));
  return units;
}

}  // namespace extshuffle::device::cuda
