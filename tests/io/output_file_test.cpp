// The output file (io/output_file.hpp): two 1 MiB buffers written behind
// asynchronously, writeback started as each lands. Whatever the sizes and
// however the bytes are handed over, the committed file must hold exactly
// them, and nothing may reach the destination before commit().
#include "extshuffle/io/output_file.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <random>
#include <string>

#include "support/command.hpp"
#include "support/test_values.hpp"

namespace extshuffle::io {
namespace {

using testing::random_bytes;
using testing::read_file;
using testing::TempDir;
using testing::write_file;


constexpr std::size_t kPage = 4096;
constexpr std::size_t kBuffer = std::size_t{1} << 20;  // OutputFile's buffer

TEST(OutputFile, HoldsExactlyTheBytesWrittenAtEverySizeAroundPagesAndBuffers) {
  TempDir dir;
  const std::string destination = (dir / "out.bin").string();
  for (std::size_t size : {std::size_t{0}, std::size_t{1}, kPage - 1, kPage, kPage + 1, 3 * kPage + 17, kBuffer - 1,
                           kBuffer, kBuffer + 1, 2 * kBuffer + kPage, 2 * kBuffer + kPage + 5}) {
    const std::string bytes = random_bytes(size, size);
    // Handed over in uneven pieces, so that buffer fills and page tails fall anywhere.
    for (std::size_t piece : {std::size_t{1000003}, std::size_t{7}, size + 1}) {
      if (piece == 7 && size > 3 * kPage + 17) continue;  // byte-sized pieces: small sizes only
      {
        OutputFile out(destination);
        for (std::size_t done = 0; done < size; done += piece) {
          out.write(bytes.data() + done, std::min(piece, size - done));
        }
        out.commit();
        EXPECT_EQ(out.bytes_written(), size);
      }
      const std::string written = read_file(destination);
      ASSERT_EQ(written.size(), size) << "size " << size << " piece " << piece;
      EXPECT_TRUE(written == bytes) << "size " << size << " piece " << piece;
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
    EXPECT_EQ(read_file(destination), "old contents");
  }  // never committed
  EXPECT_EQ(read_file(destination), "old contents");
  std::size_t entries = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir.path())) ++entries;
  EXPECT_EQ(entries, 1u) << "an abandoned output left a file behind";
  {
    OutputFile out(destination);
    out.write(bytes.data(), bytes.size());
    out.commit();
  }
  EXPECT_TRUE(read_file(destination) == bytes);
}

}  // namespace
}  // namespace extshuffle::io
