#include "input_reads.hpp"

#include <algorithm>

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace extshuffle::mpi {

void InputReads::add(std::size_t index, io::BlockFile& file, const std::string& path, int holder, std::uint64_t begin,
                     std::uint64_t end) {
  if (begin >= end) return;
  File& f = files_[index];
  f.file = &file;
  f.path = path;
  f.holder = holder;
  f.ranges.emplace_back(begin, end);
}

std::vector<std::uint64_t> InputReads::blocks(std::size_t index) const {
  std::vector<std::uint64_t> blocks;
  const auto found = files_.find(index);
  if (found == files_.end()) return blocks;
  for (const auto& [begin, end] : found->second.ranges) {
    for (std::uint64_t b = begin / kCheckedBlockBytes; b * kCheckedBlockBytes < end; ++b) blocks.push_back(b);
  }
  std::sort(blocks.begin(), blocks.end());
  blocks.erase(std::unique(blocks.begin(), blocks.end()), blocks.end());
  return blocks;
}

std::pair<std::uint64_t, std::uint64_t> digest_block(io::BlockFile& file, std::uint64_t file_bytes, std::uint64_t block,
                                                     std::vector<std::byte>& buffer) {
  const std::uint64_t begin = std::min(file_bytes, block * kCheckedBlockBytes);
  const auto bytes = static_cast<std::size_t>(std::min(file_bytes - begin, kCheckedBlockBytes));
  if (bytes > 0) file.read_now(buffer.data(), begin, bytes);
  const XXH128_hash_t digest = XXH3_128bits(buffer.data(), bytes);
  return {digest.low64, digest.high64};
}

}  // namespace extshuffle::mpi
