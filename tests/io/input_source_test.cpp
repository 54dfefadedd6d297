// The input as the walk reads it (io/input_source.hpp): a plain file in
// place, a compressed file spooled into scratch space with the same bytes,
// and the check that an input read in place did not change size.
#include "extshuffle/io/input_source.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "../support/command.hpp"
#include "extshuffle/errors.hpp"
#include "extshuffle/io/compression.hpp"

namespace extshuffle::io::input_source_test {
namespace {

using testing::TempDir;
using testing::write_file;

std::string lines(int n) {
  std::string text;
  for (int i = 0; i < n; ++i) text += "line " + std::to_string(i) + "\n";
  return text;
}

TEST(InputSource, PlainFileIsReadInPlace) {
  TempDir dir;
  const std::string text = lines(1000);
  write_file(dir / "in.txt", text);
  InputSource source((dir / "in.txt").string(), dir.path().string());
  EXPECT_FALSE(source.spooled());
  EXPECT_EQ(source.bytes(), text.size());
  EXPECT_EQ(source.scratch_offset(), 0u);
  EXPECT_SAME_BYTES(source.read_head(10), text.substr(0, 10));
  EXPECT_SAME_BYTES(source.read_head(1 << 20), text);  // never past the end
  EXPECT_NO_THROW(source.check_unchanged());
}

TEST(InputSource, CompressedFileIsSpooledWithItsDecompressedBytes) {
  TempDir dir;
  const std::string text = lines(100000);
  std::string compressed;
  CompressingWriter writer(Codec::kGzip, [&](const void* data, std::size_t n) {
    compressed.append(static_cast<const char*>(data), n);
  });
  writer.write(text.data(), text.size());
  writer.finish();
  write_file(dir / "in.txt.gz", compressed);
  InputSource source((dir / "in.txt.gz").string(), dir.path().string());
  EXPECT_TRUE(source.spooled());
  ASSERT_EQ(source.bytes(), text.size());
  EXPECT_EQ(source.scratch_offset() % 4096, 0u);
  EXPECT_GE(source.scratch_offset(), text.size());
  EXPECT_SAME_BYTES(source.read_head(text.size()), text);
  EXPECT_NO_THROW(source.check_unchanged());  // read whole at the start
}

TEST(InputSource, GrowingInputIsAnInputError) {
  TempDir dir;
  write_file(dir / "in.txt", lines(10));
  InputSource source((dir / "in.txt").string(), dir.path().string());
  std::ofstream((dir / "in.txt"), std::ios::app) << "one more\n";
  EXPECT_THROW(source.check_unchanged(), InputError);
}

TEST(InputSource, MissingInputAndScratchDirectoryAreIoErrors) {
  TempDir dir;
  EXPECT_THROW(InputSource((dir / "none.txt").string(), dir.path().string()), IoError);
  write_file(dir / "in.txt", lines(10));
  EXPECT_THROW(InputSource((dir / "in.txt").string(), (dir / "no-such-dir").string()), IoError);
  EXPECT_EQ(scratch_directory("/somewhere"), "/somewhere");
}

}  // namespace
}  // namespace extshuffle::io::input_source_test
