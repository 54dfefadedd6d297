// A tar archive's samples as the shuffle carries them: each in its frame
// (formats/tar.hpp), the 8-byte length held in memory in front of the
// sample's bytes where they lie in the archive (no copy), the frames laid
// end to end in sample order.
#pragma once

#include <cstdint>
#include <vector>

#include "extshuffle/formats/tar.hpp"
#include "extshuffle/io/block_file.hpp"
#include "extshuffle/io/byte_extents.hpp"

namespace extshuffle::dataset {

// Appends the frames of `index`'s samples, from the archive at `offset` of
// `file`, to `data`: two extents a sample, pointing at `index`, which must
// outlive `data`.
void append_tar_frames(io::ByteExtents& data, io::BlockFile& file, std::uint64_t offset,
                       const formats::TarIndex& index);
// The frames of samples [first_sample, end_sample) alone.
void append_tar_frames(io::ByteExtents& data, io::BlockFile& file, std::uint64_t offset,
                       const formats::TarIndex& index, std::uint64_t first_sample, std::uint64_t end_sample);

// Where each sample's frame starts among the archive's frames laid end to
// end (samples + 1 entries; the last is all the frames' bytes): 8 bytes a
// sample.
std::vector<std::uint64_t> tar_frame_offsets(const formats::TarIndex& index);

// The frames of samples [first_sample, end_sample) of the archive at
// `offset` of `file`, read front to back in pieces of any size (what a
// process that did not index the archive is sent). Memory: two extents a
// sample of the range.
class TarFrameReader {
 public:
  TarFrameReader(io::BlockFile& file, std::uint64_t offset, const formats::TarIndex& index,
                 std::uint64_t first_sample, std::uint64_t end_sample);
  TarFrameReader(const TarFrameReader&) = delete;
  TarFrameReader& operator=(const TarFrameReader&) = delete;
  // The next `bytes` bytes of the frames (fewer only at their end); returns how many.
  std::uint64_t read(std::byte* to, std::uint64_t bytes) { return reader_.read_now(to, bytes); }

 private:
  io::ByteExtents frames_;
  io::ExtentReader reader_;
};

}  // namespace extshuffle::dataset
