// The write-behind writer (io/write_behind.hpp): whatever the offset, the
// size and the pieces it is handed, the file holds exactly the bytes written
// at their place and nothing else changes; a stream past its range goes to
// the overflow it is given, or is refused; a full disk surfaces as IoError.
// Deterministic: the false-failure rate is 0.
#include "extshuffle/io/write_behind.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "extshuffle/errors.hpp"
#include "extshuffle/io/aligned_buffer.hpp"
#include "extshuffle/io/crc32c.hpp"
#include "support/command.hpp"
#include "support/test_values.hpp"

namespace extshuffle::io::write_behind_test {
namespace {

using testing::random_bytes;
using testing::read_file;
using testing::TempDir;
using testing::write_file;


const std::byte* bytes_of(const std::string& text) { return reinterpret_cast<const std::byte*>(text.data()); }

// Writes `bytes` through a writer of `buffer` bytes per buffer, in pieces of
// at most `piece`, then finishes.
void write_in_pieces(WriteBehind& writer, const std::string& bytes, std::size_t piece) {
  for (std::size_t done = 0; done < bytes.size(); done += piece) {
    writer.write(bytes_of(bytes) + done, std::min(piece, bytes.size() - done));
    EXPECT_EQ(writer.bytes(), std::min(done + piece, bytes.size()));
  }
  writer.finish();
  EXPECT_EQ(writer.issued_bytes(), bytes.size());
}

constexpr std::size_t kPage = 4096;

// A file already holding `before` bytes, written from `offset` on through a
// writer with writeback, must hold `before` up to the offset and the
// stream's bytes after it.
void check_stream(std::size_t offset, std::size_t size, std::size_t buffer, std::size_t piece) {
  TempDir dir;
  const auto path = dir / "file";
  const std::string before = random_bytes(offset, offset + 1);
  write_file(path, before);
  const std::string bytes = random_bytes(size, size);
  {
    const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    auto file = BlockFile::open_output(path.string());
    const AlignedBuffer buffers = allocate_aligned(2 * buffer);
    WriteBehind writer({.file = file.get(), .offset = offset, .writeback_fd = fd}, buffers.get(), buffer);
    write_in_pieces(writer, bytes, piece);
    EXPECT_EQ(writer.stored().bytes, size);
    EXPECT_LE(writer.stored().extents.size(), 1u);  // one contiguous range
    ::close(fd);
  }
  const std::string written = read_file(path);
  ASSERT_EQ(written.size(), offset + size);
  EXPECT_TRUE(written.substr(0, offset) == before);
  EXPECT_TRUE(written.substr(offset) == bytes);
}

TEST(WriteBehind, HoldsExactlyTheBytesAtEveryOffsetAndSizeAroundPagesAndBuffers) {
  constexpr std::size_t kBuffer = 4 * kPage;
  for (std::size_t offset : {std::size_t{0}, std::size_t{1}, kPage - 1, kPage, 3 * kPage + 5}) {
    for (std::size_t size : {std::size_t{0}, std::size_t{1}, kPage - 1, kPage + 1, kBuffer - 1, kBuffer, kBuffer + 1,
                             2 * kBuffer, 2 * kBuffer + 1, 5 * kBuffer + kPage + 3}) {
      for (std::size_t piece : {std::size_t{1000}, kBuffer, 3 * kBuffer + 1}) {
        SCOPED_TRACE("offset " + std::to_string(offset) + " size " + std::to_string(size) + " piece " +
                     std::to_string(piece));
        check_stream(offset, size, kBuffer, piece);
      }
    }
  }
}

TEST(WriteBehind, BuffersOfAnySizeWork) {
  // Not a multiple of a page, and smaller than the pieces handed over.
  for (std::size_t buffer : {std::size_t{1}, std::size_t{7}, kPage + 3}) {
    check_stream(11, 3 * kPage + 1, buffer, 5000);
  }
}

TEST(WriteBehind, FlushIssuesWhatIsBufferedAndWritingGoesOn) {
  auto file = BlockFile::in_memory();
  std::vector<std::byte> buffers(2 * 64);
  WriteBehind writer({.file = file.get(), .offset = 100}, buffers.data(), 64);
  const std::string bytes = random_bytes(300, 3);
  writer.write(bytes_of(bytes), 10);
  EXPECT_EQ(writer.issued_bytes(), 0u);
  writer.flush();
  EXPECT_EQ(writer.issued_bytes(), 10u);
  writer.flush();  // nothing buffered: nothing issued
  writer.write(bytes_of(bytes) + 10, 290);
  writer.finish();
  EXPECT_EQ(writer.issued_bytes(), 300u);
  std::string back(300, '\0');
  file->read_now(back.data(), 100, back.size());
  EXPECT_TRUE(back == bytes);
}

// The checksum kept over whole buffers is the CRC-32C of the stream's bytes
// whatever the pieces and the buffers (a record and its tag at a time, a
// piece larger than a buffer), continues the CRC it is given (a resumed
// stream), and covers what is buffered once flush() returns.
TEST(WriteBehind, AKeptChecksumIsTheCrcOfEveryByteWritten) {
  const std::string bytes = random_bytes(5000, 5);
  for (const std::size_t buffer : {64, 100, 4096}) {
    for (const std::size_t piece : {1, 7, 33, 4999}) {
      auto file = BlockFile::in_memory();
      std::vector<std::byte> buffers(2 * buffer);
      WriteBehind writer({.file = file.get()}, buffers.data(), buffer);
      const std::uint32_t before = crc32c(kCrc32cStart, "earlier bytes", 13);
      writer.keep_checksum(before);
      write_in_pieces(writer, bytes, piece);
      EXPECT_EQ(writer.checksum(), crc32c(before, bytes.data(), bytes.size())) << buffer << " " << piece;
    }
  }
  auto file = BlockFile::in_memory();
  std::vector<std::byte> buffers(2 * 64);
  WriteBehind writer({.file = file.get()}, buffers.data(), 64);
  writer.keep_checksum(kCrc32cStart);
  writer.write(bytes_of(bytes), 10);
  writer.flush();
  EXPECT_EQ(writer.checksum(), crc32c(kCrc32cStart, bytes.data(), 10));
}

std::string read_all(const ByteExtents& extents) {
  std::string bytes(extents.bytes, '\0');
  ExtentReader reader(extents);
  EXPECT_EQ(reader.read_now(reinterpret_cast<std::byte*>(bytes.data()), bytes.size()), bytes.size());
  return bytes;
}

TEST(WriteBehind, BytesPastTheRangeGoWhereTheOverflowPlacesThem) {
  auto file = BlockFile::in_memory();
  std::vector<std::byte> buffers(2 * 100);
  std::vector<std::uint64_t> asked;
  std::uint64_t top = 10000;
  auto overflow = [&](std::uint64_t bytes) {
    asked.push_back(bytes);
    return std::exchange(top, top + bytes + 1000);
  };
  WriteBehind writer({.file = file.get(), .offset = 500, .range = 250, .overflow = overflow}, buffers.data(), 100);
  const std::string bytes = random_bytes(480, 4);
  write_in_pieces(writer, bytes, 33);
  // 100 + 100 in the range, then 50 in it and 50 past it, then 100 and 80.
  EXPECT_EQ(asked, (std::vector<std::uint64_t>{50, 100, 80}));
  const ByteExtents& stored = writer.stored();
  ASSERT_EQ(stored.extents.size(), 4u);
  EXPECT_EQ(stored.extents[0].offset, 500u);
  EXPECT_EQ(stored.extents[0].bytes, 250u);
  EXPECT_EQ(stored.extents[1].offset, 10000u);
  EXPECT_SAME_BYTES(read_all(stored), bytes);
}

TEST(WriteBehind, AStreamPastItsRangeWithoutOverflowIsRefused) {
  auto file = BlockFile::in_memory();
  std::vector<std::byte> buffers(2 * 64);
  WriteBehind writer({.file = file.get(), .offset = 0, .range = 10}, buffers.data(), 64);
  const std::string bytes = random_bytes(11, 5);
  writer.write(bytes_of(bytes), bytes.size());
  EXPECT_THROW(writer.finish(), std::logic_error);
}

// Writes `size` bytes to `path` through a writer and returns the errno of
// the IoError it throws (on a write or on finish()), or 0.
int error_writing(const std::string& path, std::size_t size) {
  auto file = BlockFile::open_output(path);
  const AlignedBuffer buffers = allocate_aligned(2 * 16 * kPage);
  WriteBehind writer({.file = file.get()}, buffers.get(), 16 * kPage);
  const std::string bytes = random_bytes(size, 6);
  try {
    write_in_pieces(writer, bytes, 5 * kPage + 1);
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    return e.error_number();
  }
  return 0;
}

TEST(WriteBehind, AFullDiskSurfacesAsIoError) {
  // /dev/full fails every write with ENOSPC, the first buffer's included.
  ASSERT_EQ(::access("/dev/full", W_OK), 0) << "no /dev/full to write to";
  EXPECT_EQ(error_writing("/dev/full", 10), ENOSPC);  // on finish()
  EXPECT_EQ(error_writing("/dev/full", 40 * kPage), ENOSPC);  // on a write
}

TEST(WriteBehind, AFileSizeLimitReachedPartwaySurfacesAsIoError) {
  // RLIMIT_FSIZE stops the file at 100 KiB, after some buffers have landed:
  // the writes past it fail with EFBIG (SIGXFSZ ignored meanwhile).
  TempDir dir;
  const std::string path = (dir / "file").string();
  write_file(path, "");
  struct rlimit saved {};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &saved), 0);
  struct rlimit limited = saved;
  limited.rlim_cur = 25 * kPage;
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &limited), 0);
  const int error = error_writing(path, 100 * kPage);
  ::setrlimit(RLIMIT_FSIZE, &saved);
  std::signal(SIGXFSZ, old_handler);
  EXPECT_EQ(error, EFBIG);
  EXPECT_SAME_BYTES(read_file(path), random_bytes(100 * kPage, 6).substr(0, 25 * kPage));  // what fit, intact
}

}  // namespace
}  // namespace extshuffle::io::write_behind_test
