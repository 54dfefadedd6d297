// An archive's frames read through windows of its index
// (src/mpi/inputs/archive_windows.hpp), as a rank that did not index the
// archive reads them: for every window [begin, end) of the frames, cut
// anywhere (inside a frame's length prefix, a header, a member's data, or
// across many samples), the bytes read are those of all the frames, read
// through the whole index (dataset::append_tar_frames), at that offset. The archive is written by
// Python's tarfile (GNU long names, pax headers, a directory member inside
// a sample, so that a sample is several ranges), and indexed by
// formats::TarScanner. The windows are drawn from a fixed seed: there is no
// false failure.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "extshuffle/dataset/tar_frames.hpp"
#include "extshuffle/formats/tar.hpp"
#include "extshuffle/io/block_file.hpp"
#include "extshuffle/io/byte_extents.hpp"
#include "mpi/inputs/archive_windows.hpp"
#include "support/command.hpp"

namespace extshuffle::mpi::mpi_archive_windows_test {
namespace {

const char* const kWriteArchive = R"(
import io, random, sys, tarfile
rng = random.Random(7)
def add(t, name, data):
    info = tarfile.TarInfo(name)
    info.size = len(data)
    t.addfile(info, io.BytesIO(data))
with tarfile.open(sys.argv[1], "w", format=tarfile.PAX_FORMAT) as t:
    for i in range(300):
        key = ("k%04d" % i) + ("_" + "n" * 120 if i % 17 == 0 else "")
        add(t, key + ".txt", b"t" * rng.choice([0, 1, 511, 512, 513, 3000, rng.randrange(20000)]))
        if i % 11 == 0:
            d = tarfile.TarInfo(key + ".dir")
            d.type = tarfile.DIRTYPE
            t.addfile(d)
        add(t, key + ".cls", b"%d" % i)
)";

std::string read_all(const std::string& path) {
  auto file = io::BlockFile::open_input(path);
  std::string bytes(file->size(), '\0');
  file->read_now(bytes.data(), 0, bytes.size());
  return bytes;
}

TEST(ArchiveWindows, EveryWindowReadsTheFramesTheHoldersReaderReads) {
  testing::TempDir dir;
  const std::string archive = (dir.path() / "a.tar").string(), script = (dir.path() / "w.py").string();
  testing::write_file(script, kWriteArchive);
  ASSERT_EQ(testing::run_command("/usr/bin/python3 " + script + " " + archive).exit_code, 0);
  const std::string bytes = read_all(archive);
  formats::TarScanner scanner("a.tar", false);
  scanner.add(bytes.data(), bytes.size());
  const formats::TarIndex index = scanner.finish();
  ASSERT_EQ(index.samples(), 300u);
  EXPECT_GT(index.ranges.size(), index.samples()) << "some sample is several ranges (a directory inside it)";
  const std::vector<std::uint64_t> begin = dataset::tar_frame_offsets(index);
  auto file = io::BlockFile::open_input(archive);
  std::string frames(begin.back(), '\0');
  io::ByteExtents extents;
  dataset::append_tar_frames(extents, *file, 0, index);
  io::ExtentReader all(extents);
  for (std::uint64_t at = 0; at < frames.size();) {
    const std::uint64_t n = all.read_now(reinterpret_cast<std::byte*>(frames.data()) + at, frames.size() - at);
    ASSERT_GT(n, 0u);
    at += n;
  }
  std::mt19937_64 rng(20261128);
  for (int trial = 0; trial < 2000; ++trial) {
    std::uint64_t from = rng() % frames.size();
    // Some windows start on a frame, some end on one, some are one byte.
    if (trial % 5 == 0) from = begin[rng() % index.samples()];
    const std::uint64_t most = frames.size() - from;
    const std::uint64_t length =
        trial % 7 == 0 ? 1 : std::min<std::uint64_t>(most, 1 + rng() % (trial % 3 == 0 ? most : 70000));
    const std::vector<std::uint64_t> window = encode_frame_window(index, begin, from, from + length);
    std::string got(length, '\0');
    read_frame_window(window, *file, 0, reinterpret_cast<std::byte*>(got.data()), length);
    ASSERT_SAME_BYTES(got, frames.substr(from, length)) << "window [" << from << ", " << from + length << ")";
  }
}

}  // namespace
}  // namespace extshuffle::mpi::mpi_archive_windows_test
