// MappedBytes (io/mapped_bytes.hpp): the bytes of a file at any offset and
// length, pages edges included, with the byte after them writable and the
// file never written; a memory file is not mapped. The SIGBUS handler is
// tested end to end in tests/reliability/input_change_test.cpp.
// Deterministic: the false-failure rate is 0.
#include "extshuffle/io/mapped_bytes.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <string>

#include "../support/command.hpp"
#include "extshuffle/io/block_file.hpp"

namespace extshuffle::io::mapped_bytes_test {
namespace {

std::string pattern(std::size_t bytes) {
  std::string text(bytes, '\0');
  for (std::size_t k = 0; k < bytes; ++k) text[k] = static_cast<char>('a' + k % 26);
  return text;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(MappedBytes, AnyOffsetAndLengthAroundPagesWithAWritableByteAfter) {
  testing::TempDir dir;
  const auto page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  for (const std::uint64_t size : {std::uint64_t{1}, page - 1, page, page + 1, 3 * page}) {
    const std::string path = (dir.path() / ("in" + std::to_string(size))).string();
    const std::string text = pattern(size);
    std::ofstream(path, std::ios::binary) << text;
    const auto file = BlockFile::open_input(path);
    for (const std::uint64_t offset : {std::uint64_t{0}, std::uint64_t{1}, size / 2, size - 1, size}) {
      SCOPED_TRACE("size " + std::to_string(size) + ", offset " + std::to_string(offset));
      auto mapped = MappedBytes::map(*file, offset, size - offset, "'in'");
      ASSERT_TRUE(mapped.has_value());
      EXPECT_EQ(mapped->bytes(), size - offset);
      EXPECT_EQ(std::memcmp(mapped->data(), text.data() + offset, size - offset), 0);
      EXPECT_EQ(mapped->after(), std::byte{0});
      mapped->after() = std::byte{'\n'};
      EXPECT_EQ(static_cast<char>(mapped->data()[size - offset]), '\n');
      mapped->expect_sequential(true);
      mapped->expect_sequential(false);
      MappedBytes moved = std::move(*mapped);
      EXPECT_EQ(std::memcmp(moved.data(), text.data() + offset, size - offset), 0);
    }
    EXPECT_SAME_BYTES(read_file(path), text) << "the input was written";
  }
}

TEST(MappedBytes, AMemoryFileIsNotMapped) {
  const auto file = BlockFile::in_memory();
  const char text[] = "a\nb\n";
  file->write_now(text, 0, 4);
  EXPECT_FALSE(MappedBytes::map(*file, 0, 4, "'memory'").has_value());
}

}  // namespace
}  // namespace extshuffle::io::mapped_bytes_test
