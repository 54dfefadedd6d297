// How the CUDA back end cuts a call's jobs into units (unit_plan.hpp):
// host arithmetic, run on the CPU without a GPU. Every job lands in exactly
// one unit, in order, packed tightly; no unit passes its byte or job limit
// unless it is one large job; host ranges cover each job's bytes once, with
// adjacent ones merged; bad jobs are refused. Deterministic: false-failure
// rate 0.
#include <gtest/gtest.h>

#include <vector>

#include "device/cuda/unit_plan.hpp"
#include "extshuffle/device/device_error.hpp"

namespace extshuffle::device::cuda::cuda_unit_plan_test {
namespace {

core::VariablePhilox bijection(std::uint64_t n) {
  return core::shuffle_bijection(1, core::StreamAddress{core::NodeId{0, 0}, core::Purpose::kLab, n}, n);
}

std::uint64_t range_bytes(const std::vector<HostRange>& ranges) {
  std::uint64_t bytes = 0;
  for (const HostRange& r : ranges) bytes += r.bytes;
  return bytes;
}

TEST(CudaUnitPlan, JobsArePackedInOrderWithinTheLimits) {
  constexpr std::size_t r = 12;
  std::vector<std::uint64_t> sizes;
  for (std::uint64_t k = 0; k < 500; ++k) sizes.push_back((k * 7919) % 3000);
  sizes.push_back(100000);  // larger than a unit: a unit of its own
  std::uint64_t total = 0;
  for (std::uint64_t n : sizes) total += n;
  std::vector<std::byte> in(total * r), out(total * r);
  std::vector<ShuffleJob> jobs;
  std::uint64_t at = 0;
  for (std::uint64_t n : sizes) {
    jobs.push_back({in.data() + at * r, out.data() + at * r, n, bijection(n)});
    at += n;
  }
  const std::uint64_t unit_bytes = 64 * 1024;
  const auto units = plan_units(jobs, r, unit_bytes, 37);
  std::size_t next = 0;
  for (const Unit& u : units) {
    ASSERT_FALSE(u.jobs.empty());
    EXPECT_LE(u.jobs.size(), 37u);
    EXPECT_TRUE(u.bytes <= unit_bytes || u.jobs.size() == 1) << u.bytes;
    std::uint64_t offset = 0;
    for (const LaunchJob& job : u.jobs) {
      while (jobs[next].records == 0) ++next;
      EXPECT_EQ(job.records, jobs[next].records);
      EXPECT_EQ(job.offset_bytes, offset);
      offset += job.records * r;
      ++next;
    }
    EXPECT_EQ(offset, u.bytes);
    EXPECT_EQ(range_bytes(u.inputs), u.bytes);
    EXPECT_EQ(range_bytes(u.outputs), u.bytes);
    // The jobs of one host buffer are adjacent: one range per unit.
    EXPECT_EQ(u.inputs.size(), 1u);
    EXPECT_EQ(u.outputs.size(), 1u);
    EXPECT_EQ(u.inputs[0].host - in.data(), u.outputs[0].host - out.data());
  }
  while (next < jobs.size() && jobs[next].records == 0) ++next;
  EXPECT_EQ(next, jobs.size());
}

TEST(CudaUnitPlan, SeparateBuffersGetSeparateRanges) {
  std::vector<std::vector<std::byte>> buffers(5, std::vector<std::byte>(800));
  std::vector<std::byte> out(4000);
  std::vector<ShuffleJob> jobs;
  for (std::size_t k = 0; k < 5; ++k) jobs.push_back({buffers[k].data(), out.data() + 800 * k, 100, bijection(100)});
  const auto units = plan_units(jobs, 8, 1 << 20, 100);
  ASSERT_EQ(units.size(), 1u);
  EXPECT_EQ(units[0].inputs.size(), 5u);
  EXPECT_EQ(units[0].outputs.size(), 1u);
  for (std::size_t k = 0; k < 5; ++k) EXPECT_EQ(units[0].inputs[k].device_offset, 800 * k);
}

TEST(CudaUnitPlan, BadJobsAreRefused) {
  std::vector<std::byte> buffer(64);
  const ShuffleJob null_input{nullptr, buffer.data(), 4, bijection(4)};
  EXPECT_THROW(plan_units(std::span<const ShuffleJob>(&null_input, 1), 8, 1 << 20, 10), DeviceError);
  const ShuffleJob small_domain{buffer.data(), buffer.data(), 1000, bijection(4)};
  EXPECT_THROW(plan_units(std::span<const ShuffleJob>(&small_domain, 1), 1, 1 << 20, 10), DeviceError);
  const ShuffleJob overflow{buffer.data(), buffer.data(), std::uint64_t{1} << 62, bijection(1ull << 62)};
  EXPECT_THROW(plan_units(std::span<const ShuffleJob>(&overflow, 1), 8, 1 << 20, 10), DeviceError);
  const ShuffleJob empty{nullptr, nullptr, 0, bijection(0)};
  EXPECT_TRUE(plan_units(std::span<const ShuffleJob>(&empty, 1), 8, 1 << 20, 10).empty());
}

}  // namespace
}  // namespace extshuffle::device::cuda::cuda_unit_plan_test
