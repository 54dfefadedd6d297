// A file's fingerprint from sampled blocks (io/file_fingerprint.hpp): which
// blocks it reads, and that a change in any of them, or in the size, shows.
// Deterministic: no test here can fail by chance.
#include "extshuffle/io/file_fingerprint.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

#include "../support/command.hpp"
#include "extshuffle/errors.hpp"

namespace extshuffle::io::file_fingerprint_test {
namespace {

using testing::TempDir;
using testing::write_file;

constexpr std::uint64_t kBlock = kFingerprintBlockBytes;

std::string patterned(std::uint64_t bytes) {
  std::string text(bytes, '\0');
  for (std::uint64_t k = 0; k < bytes; ++k) text[k] = static_cast<char>('a' + (k * 7 + k / 251) % 26);
  return text;
}

TEST(FileFingerprint, SmallFilesAreReadWhole) {
  EXPECT_TRUE(fingerprint_block_offsets(0, 1).empty());
  EXPECT_EQ(fingerprint_block_offsets(1, 1), (std::vector<std::uint64_t>{0}));
  const auto ten = fingerprint_block_offsets(10 * kBlock, 99);
  ASSERT_EQ(ten.size(), 10u);
  for (std::uint64_t b = 0; b < 10; ++b) EXPECT_EQ(ten[b], b * kBlock);
}

TEST(FileFingerprint, LargeFilesSampleTheEndsAndBlocksTheSeedChooses) {
  const std::uint64_t size = 1000 * kBlock + 17;  // 1001 blocks, the last short
  for (std::uint64_t seed : {0ull, 1ull, 42ull, ~0ull}) {
    const auto offsets = fingerprint_block_offsets(size, seed);
    ASSERT_GE(offsets.size(), 3u);
    ASSERT_LE(offsets.size(), 2u + kFingerprintChosenBlocks);
    EXPECT_EQ(offsets.front(), 0u);
    EXPECT_EQ(offsets.back(), 1000 * kBlock);
    for (std::size_t k = 1; k < offsets.size(); ++k) {
      EXPECT_LT(offsets[k - 1], offsets[k]);
      EXPECT_EQ(offsets[k] % kBlock, 0u);
    }
    EXPECT_EQ(offsets, fingerprint_block_offsets(size, seed));  // a pure function
  }
  EXPECT_NE(fingerprint_block_offsets(size, 1), fingerprint_block_offsets(size, 2));
}

TEST(FileFingerprint, AChangeInAnySampledBlockOrInTheSizeShows) {
  TempDir dir;
  const std::string path = (dir / "data.bin").string();
  const std::uint64_t size = 40 * kBlock + 123;
  const std::string original = patterned(size);
  write_file(path, original);
  const FileFingerprint base = fingerprint_path(path, 7);
  EXPECT_EQ(base.size_bytes, size);
  EXPECT_EQ(base, fingerprint_path(path, 7));
  for (std::uint64_t offset : fingerprint_block_offsets(size, 7)) {
    std::string changed = original;
    const std::uint64_t at = std::min(size - 1, offset + kBlock / 2);
    changed[at] = static_cast<char>(changed[at] ^ 1);
    write_file(path, changed);
    EXPECT_NE(fingerprint_path(path, 7), base) << "a bit flipped at " << at;
  }
  write_file(path, original + "x");
  EXPECT_NE(fingerprint_path(path, 7), base);
  write_file(path, original);
  EXPECT_EQ(fingerprint_path(path, 7), base);
}

TEST(FileFingerprint, EqualBytesGiveEqualFingerprintsWhereverTheyLie) {
  TempDir dir;
  const std::string text = patterned(13 * kBlock + 5);
  write_file(dir / "a", text);
  write_file(dir / "b", text);
  EXPECT_EQ(fingerprint_path((dir / "a").string(), 3), fingerprint_path((dir / "b").string(), 3));
  EXPECT_EQ(fingerprint_path((dir / "a").string(), 3).to_string().size(), std::to_string(text.size()).size() + 33);
}

TEST(FileFingerprint, AFileShorterThanItsSizeIsAnInputError) {
  TempDir dir;
  const std::string path = (dir / "short.bin").string();
  write_file(path, patterned(1000));
  const int fd = ::open(path.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  EXPECT_THROW(fingerprint_file(fd, 5000, 1, path), InputError);
  ::close(fd);
  EXPECT_THROW(fingerprint_path((dir / "missing").string(), 1), IoError);
}

}  // namespace
}  // namespace extshuffle::io::file_fingerprint_test
