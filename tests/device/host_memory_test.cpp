#include "extshuffle/device/host_memory.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

namespace extshuffle::device::host_memory_test {
namespace {

// Feature bits as the kernel spells them, one character a bit; bit 5 is
// free page reporting. The first is this project's build machine's balloon.
TEST(HugePagePolicy, FreePageReportingIsBitFive) {
  EXPECT_TRUE(reports_free_pages("0110010100000000000000000000000010000000\n"));
  EXPECT_FALSE(reports_free_pages("0110000100000000000000000000000010000000\n"));
  EXPECT_TRUE(reports_free_pages("000001"));
  EXPECT_FALSE(reports_free_pages("00000"));
  EXPECT_FALSE(reports_free_pages(""));
}

TEST(HostMemory, IsAlignedToHugePagesAndWritableToItsEnd) {
  constexpr std::size_t kBytes = (std::size_t{5} << 20) + 123;
  HostMemory memory = allocate_host_memory(Device::kCpu, kBytes);
  ASSERT_NE(memory.get(), nullptr);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(memory.get()) % (std::size_t{2} << 20), 0u);
  std::memset(memory.get(), 0xA5, kBytes);
  EXPECT_EQ(memory[kBytes - 1], std::byte{0xA5});
}

}  // namespace
}  // namespace extshuffle::device::host_memory_test
