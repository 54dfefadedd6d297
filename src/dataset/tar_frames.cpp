#include "extshuffle/dataset/tar_frames.hpp"

namespace extshuffle::dataset {

void append_tar_frames(io::ByteExtents& data, io::BlockFile& file, std::uint64_t offset,
                       const formats::TarIndex& index) {
  for (std::uint64_t k = 0; k < index.samples(); ++k) {
    data.append({nullptr, 0, formats::kTarFrameBytes, reinterpret_cast<const std::byte*>(&index.frame_lengths[k])});
    for (std::uint64_t r = index.first_range[k]; r < index.first_range[k + 1]; ++r) {
      data.append({&file, offset + index.ranges[r].offset, index.ranges[r].bytes, nullptr});
    }
  }
}

std::vector<std::uint64_t> tar_frame_offsets(const formats::TarIndex& index) {
  std::vector<std::uint64_t> begin(index.samples() + 1, 0);
  for (std::uint64_t k = 0; k < index.samples(); ++k) {
    begin[k + 1] = begin[k] + formats::kTarFrameBytes + index.frame_lengths[k];
  }
  return begin;
}

}  // namespace extshuffle::dataset
