// The output file (io/output_file.hpp): two 1 MiB buffers written behind
// asynchronously, writeback started as each lands. Whatever the sizes and
// however the bytes are handed over, the committed file must hold exactly
// them, and nothing may reach the destination before the commit; the same
// unbuffered (O_DIRECT pages, the tail buffered) where the file system allows.
#include "extshuffle/io/output_file.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "extshuffle/io/publication.hpp"
#include "support/command.hpp"
#include "support/test_values.hpp"

namespace extshuffle::io::output_file_test {
namespace {

using testing::random_bytes;
using testing::read_file;
using testing::TempDir;
using testing::write_file;

// The commit's steps for one file (dataset/output_commit.hpp's, alone):
// prepared, renamed through io::Publication, published.
void commit_alone(OutputFile& out) {
  out.prepare_commit();
  std::vector<PendingRename> renames;
  if (auto rename = out.pending_rename()) renames.push_back(std::move(*rename));
  Publication publication(std::move(renames));
  publication.prepare();
  publication.publish();
  out.published();
}

constexpr std::size_t kPage = 4096;
constexpr std::size_t kBuffer = std::size_t{1} << 20;  // OutputFile's buffer

// Hands `bytes` to a new output for `destination` in pieces of `piece`
// bytes (after `prepare`, given the fresh output), commits, and checks that
// the file holds exactly them.
void expect_written_in_pieces(const std::string& destination, const std::string& bytes, std::size_t piece,
                              const std::function<void(OutputFile&)>& prepare = {}) {
  const std::size_t size = bytes.size();
  {
    OutputFile out(destination);
    if (prepare) prepare(out);
    for (std::size_t done = 0; done < size; done += piece) {
      out.write(bytes.data() + done, std::min(piece, size - done));
    }
    commit_alone(out);
    EXPECT_EQ(out.bytes_written(), size);
  }
  const std::string written = read_file(destination);
  ASSERT_EQ(written.size(), size) << "size " << size << " piece " << piece;
  EXPECT_TRUE(written == bytes) << "size " << size << " piece " << piece;
}

TEST(OutputFile, HoldsExactlyTheBytesWrittenAtEverySizeAroundPagesAndBuffers) {
  TempDir dir;
  const std::string destination = (dir / "out.bin").string();
  for (std::size_t size : {std::size_t{0}, std::size_t{1}, kPage - 1, kPage, kPage + 1, 3 * kPage + 17, kBuffer - 1,
                           kBuffer, kBuffer + 1, 2 * kBuffer + kPage, 2 * kBuffer + kPage + 5}) {
    const std::string bytes = random_bytes(size, size);
    // Handed over in uneven pieces, so that buffer fills and page tails fall anywhere.
    for (std::size_t piece : {std::size_t{1000003}, std::size_t{7}, size + 1}) {
      if (piece == 7 && size > 3 * kPage + 17) continue;  // byte-sized pieces: small sizes only
      expect_written_in_pieces(destination, bytes, piece);
    }
  }
}

TEST(OutputFile, TheDestinationIsUntouchedUntilCommitAndAfterAnAbandonedRun) {
  TempDir dir;
  const std::string destination = (dir / "out.bin").string();
  write_file(destination, "old contents");
  const std::string bytes = random_bytes(kBuffer + kPage + 3, 1);
  {
    OutputFile out(destination);
    out.write(bytes.data(), bytes.size());
    EXPECT_SAME_BYTES(read_file(destination), "old contents");
  }  // never committed
  EXPECT_SAME_BYTES(read_file(destination), "old contents");
  std::size_t entries = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir.path())) ++entries;
  EXPECT_EQ(entries, 1u) << "an abandoned output left a file behind";
  {
    OutputFile out(destination);
    out.write(bytes.data(), bytes.size());
    commit_alone(out);
  }
  EXPECT_TRUE(read_file(destination) == bytes);
}

// Whether the file system of `directory` opens files with O_DIRECT.
bool takes_o_direct(const std::string& directory) {
  const std::string probe = directory + "/probe";
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_DIRECT | O_CLOEXEC, 0600);
  if (fd >= 0) ::close(fd);
  std::filesystem::remove(probe);
  return fd >= 0;
}

TEST(OutputFile, UnbufferedHoldsExactlyTheBytesWrittenAtEverySizeAroundPagesAndBuffers) {
  TempDir dir;
  const std::string destination = (dir / "out.bin").string();
  const bool direct = takes_o_direct(dir.path().string());
  for (std::size_t size : {std::size_t{0}, std::size_t{1}, kPage - 1, kPage, kPage + 1, 3 * kPage + 17, kBuffer - 1,
                           kBuffer, kBuffer + 1, 2 * kBuffer + kPage, 2 * kBuffer + kPage + 5}) {
    const std::string bytes = random_bytes(size, size + 1);
    for (std::size_t piece : {std::size_t{1000003}, std::size_t{4096}, size + 1}) {
      expect_written_in_pieces(destination, bytes, piece, [&](OutputFile& out) {
        EXPECT_EQ(out.prefer_unbuffered(), direct);
        EXPECT_EQ(out.is_unbuffered(), direct);
      });
    }
  }
}

TEST(OutputFile, StaysBufferedOnceWrittenAndOnStandardOutput) {
  TempDir dir;
  const std::string destination = (dir / "out.bin").string();
  const std::string bytes = random_bytes(kBuffer + 5, 3);
  {
    OutputFile out(destination);
    out.write(bytes.data(), 5);
    EXPECT_FALSE(out.prefer_unbuffered()) << "switched after the first write";
    out.write(bytes.data() + 5, bytes.size() - 5);
    commit_alone(out);
  }
  EXPECT_TRUE(read_file(destination) == bytes);
  OutputFile standard_output("-");
  EXPECT_FALSE(standard_output.prefer_unbuffered());
  EXPECT_FALSE(standard_output.is_unbuffered());
}

}  // namespace
}  // namespace extshuffle::io::output_file_test
