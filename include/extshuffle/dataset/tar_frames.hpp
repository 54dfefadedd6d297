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

// Where each sample's frame starts among the archive's frames laid end to
// end (samples + 1 entries; the last is all the frames' bytes): 8 bytes a
// sample.
std::vector<std::uint64_t> tar_frame_offsets(const formats::TarIndex& index);

}  // namespace extshuffle::dataset
