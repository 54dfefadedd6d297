// The whole executor with the CUDA back end gives the same bytes as with the
// CPU back end, in RAM and streaming through scratch space; so does the CLI.
// Skips without a usable GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "extshuffle/ioperm/fixed_size_shuffle.hpp"
#include "extshuffle/io/block_file.hpp"
#include "support/command.hpp"
#include "support/permutations.hpp"
#include "support/walk_options.hpp"

namespace extshuffle::ioperm::cuda_executor_test {
namespace {

std::vector<std::byte> run_on(device::Device device, const std::vector<std::byte>& input, std::size_t record_size,
                              const core::PlanConstants& c, std::uint64_t memory_bytes) {
  auto source = io::BlockFile::in_memory();
  source->write_now(input.data(), 0, input.size());
  auto scratch = io::BlockFile::in_memory();
  std::vector<std::byte> output;
  shuffle_fixed_size(*source, 0, input.size() / record_size, *scratch, 0,
                     testing::walk_options(record_size, 11, c, memory_bytes, 2, device),
                     [&](const std::byte* data, std::size_t n) { output.insert(output.end(), data, data + n); });
  return output;
}

TEST(CudaExecutor, SameBytesAsTheCpuInRamAndThroughDisk) {
  if (!device::cuda_available()) GTEST_SKIP() << device::cuda_unavailable_reason();
  const core::PlanConstants small{256, 8};
  for (std::size_t r : {4ul, 8ul, 12ul, 16ul, 100ul}) {
    const auto input = testing::numbered_records(300007, r);
    for (std::uint64_t memory : {std::uint64_t{1} << 30, std::uint64_t{1} << 20}) {
      EXPECT_EQ(run_on(device::Device::kCuda, input, r, small, memory),
                run_on(device::Device::kCpu, input, r, small, memory))
          << "record size " << r << " memory " << memory;
    }
  }
  const auto big = testing::numbered_records((1ull << 22) + 5, 8);
  EXPECT_EQ(run_on(device::Device::kCuda, big, 8, core::kPlanV2, std::uint64_t{16} << 20),
            run_on(device::Device::kCpu, big, 8, core::kPlanV2, std::uint64_t{16} << 20));
}

TEST(CudaExecutor, CliDeviceCudaEqualsDeviceCpu) {
  if (!device::cuda_available()) GTEST_SKIP() << device::cuda_unavailable_reason();
  testing::TempDir dir;
  const auto data = testing::numbered_records((1ull << 21) + 3, 8);
  testing::write_file(dir / "in.bin", std::string(reinterpret_cast<const char*>(data.data()), data.size()));
  const std::string base = testing::extshuffle_binary() + " --record-size 8 --seed 4 -S 12M -T " +
                           dir.path().string() + " " + (dir / "in.bin").string() + " ";
  ASSERT_EQ(testing::run_command(base + (dir / "cpu.bin").string() + " --device cpu").exit_code, 0);
  ASSERT_EQ(testing::run_command(base + (dir / "gpu.bin").string() + " --device cuda").exit_code, 0);
  EXPECT_SAME_BYTES(testing::read_file(dir / "cpu.bin"), testing::read_file(dir / "gpu.bin"));
}

// Without a usable GPU: --device cuda fails before reading anything, with
// one line on stderr and exit status 1, and leaves no output file;
// --device auto runs on the CPU (the same bytes as --device cpu).
TEST(CudaExecutor, CliWithoutAGpuRefusesCudaAndAutoRunsOnTheCpu) {
  if (device::cuda_available()) GTEST_SKIP() << "a GPU is usable here";
  testing::TempDir dir;
  const auto data = testing::numbered_records(1000, 8);
  testing::write_file(dir / "in.bin", std::string(reinterpret_cast<const char*>(data.data()), data.size()));
  const std::string base = testing::extshuffle_binary() + " --record-size 8 --seed 4 " + (dir / "in.bin").string() + " ";
  const auto cuda = testing::run_command(base + (dir / "gpu.bin").string() + " --device cuda");
  EXPECT_EQ(cuda.exit_code, 1);
  EXPECT_EQ(cuda.err.rfind("extshuffle: CUDA device requested: ", 0), 0u) << cuda.err;
  EXPECT_EQ(std::count(cuda.err.begin(), cuda.err.end(), '\n'), 1) << cuda.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "gpu.bin"));
  ASSERT_EQ(testing::run_command(base + (dir / "auto.bin").string() + " --device auto").exit_code, 0);
  ASSERT_EQ(testing::run_command(base + (dir / "cpu.bin").string() + " --device cpu").exit_code, 0);
  EXPECT_SAME_BYTES(testing::read_file(dir / "auto.bin"), testing::read_file(dir / "cpu.bin"));
}

}  // namespace
}  // namespace extshuffle::ioperm::cuda_executor_test
