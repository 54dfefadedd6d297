// io/memory_limit.hpp: the cgroup limit read from /proc/self/cgroup texts and
// fake limit files, for cgroup v2, v1 and hybrid layouts. Deterministic: the
// false-failure rate is 0.
#include "extshuffle/io/memory_limit.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace extshuffle::io::memory_limit_test {
namespace {

FileReader files(const std::map<std::string, std::string>& contents) {
  return [contents](const std::string& path) -> std::optional<std::string> {
    const auto it = contents.find(path);
    if (it == contents.end()) return std::nullopt;
    return it->second;
  };
}

TEST(MemoryLimit, CgroupV2TakesTheLowestLimitOnThePath) {
  const auto read = files({{"/cg/a/b/memory.max", "max\n"}, {"/cg/a/memory.max", "8589934592\n"},
                           {"/cg/memory.max", "17179869184\n"}});
  EXPECT_EQ(cgroup_memory_limit("0::/a/b\n", "/cg", read), std::uint64_t{8} << 30);
  EXPECT_EQ(cgroup_memory_limit("0::/\n", "/cg", read), std::uint64_t{16} << 30);
  EXPECT_EQ(cgroup_memory_limit("0::/a/b\n", "/cg", files({{"/cg/a/b/memory.max", "max\n"}})), std::nullopt);
}

TEST(MemoryLimit, CgroupV1AndHybridLayouts) {
  // v1 "no limit" is a huge number, not a limit.
  const auto read = files({{"/cg/memory/job/memory.limit_in_bytes", "1073741824\n"},
                           {"/cg/memory/memory.limit_in_bytes", "9223372036854771712\n"}});
  EXPECT_EQ(cgroup_memory_limit("4:memory:/job\n3:cpuset:/\n", "/cg", read), std::uint64_t{1} << 30);
  EXPECT_EQ(cgroup_memory_limit("4:cpu,memory:/job\n", "/cg", read), std::uint64_t{1} << 30);
  EXPECT_EQ(cgroup_memory_limit("4:memory:/\n", "/cg", read), std::nullopt);
  // Hybrid: a v2 line with no memory.max beside the v1 memory line.
  EXPECT_EQ(cgroup_memory_limit("9:name=systemd:/\n4:memory:/job\n0::/\n", "/cg", read), std::uint64_t{1} << 30);
}

TEST(MemoryLimit, GarbageAndMissingFilesAreNoLimit) {
  EXPECT_EQ(cgroup_memory_limit("", "/cg", files({})), std::nullopt);
  EXPECT_EQ(cgroup_memory_limit("not a cgroup line\n", "/cg", files({})), std::nullopt);
  EXPECT_EQ(cgroup_memory_limit("0::/x\n", "/cg", files({{"/cg/x/memory.max", "12abc"}})), std::nullopt);
  EXPECT_EQ(cgroup_memory_limit("0::/x\n", "/cg", files({{"/cg/x/memory.max", "0"}})), std::nullopt);
}

TEST(MemoryLimit, UsableMemoryIsPositiveAndAtMostPhysical) {
  EXPECT_GT(usable_memory_bytes(), 0u);
  EXPECT_LE(usable_memory_bytes(), physical_memory_bytes());
}

}  // namespace
}  // namespace extshuffle::io::memory_limit_test
