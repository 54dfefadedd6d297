// An archive's frames read in place by a rank that did not index it
// (docs/mpi.md, "Datasets"): the holder of a plain tar archive sends the
// reading rank the part of its index that covers a block of the frames
// (each sample's frame length and its members' byte ranges: offsets and
// lengths, not bytes), and the reader reads the members' bytes itself from
// the archive, on the file system every rank sees. So the reads of an
// archive are shared like a plain file's, and its bytes cross the network
// at most once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "extshuffle/formats/tar.hpp"
#include "extshuffle/io/block_file.hpp"

namespace extshuffle::mpi {

// The samples of `index` whose frames overlap bytes [begin, end) of the
// archive's frames laid end to end (`frame_begin`: tar_frame_offsets, begin
// < end <= its last entry), encoded for the reader: how far into the first
// frame `begin` lies, then each sample's frame length and ranges. Memory:
// a few words a sample of the window.
std::vector<std::uint64_t> encode_frame_window(const formats::TarIndex& index,
                                               const std::vector<std::uint64_t>& frame_begin, std::uint64_t begin,
                                               std::uint64_t end);

// Reads the `bytes` bytes of frames that `window` (encode_frame_window's,
// of [begin, begin + bytes)) describes into `to`, the members' bytes from
// the archive at `offset` of `file`. Throws std::logic_error for a window
// that holds fewer bytes (a message garbled: never from a real holder).
void read_frame_window(const std::vector<std::uint64_t>& window, io::BlockFile& file, std::uint64_t offset,
                       std::byte* to, std::uint64_t bytes);

// The bytes of the archive that `window`'s members span, [first, end) from
// the archive's start (the tar headers between them included); [0, 0)
// for a window of no member. For --verify's record of the bytes a rank
// read in place (input_reads.hpp).
std::pair<std::uint64_t, std::uint64_t> frame_window_span(const std::vector<std::uint64_t>& window);

}  // namespace extshuffle::mpi
