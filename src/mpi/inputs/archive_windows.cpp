#include "archive_windows.hpp"

#include <algorithm>
#include <stdexcept>

#include "extshuffle/io/byte_extents.hpp"

namespace extshuffle::mpi {
namespace {

// A window's entries after its first word (the skip): three words each.
constexpr std::uint64_t kPrefixEntry = 0;  // a frame's length prefix: the length, unused
constexpr std::uint64_t kRangeEntry = 1;   // bytes of the archive: offset, bytes

}  // namespace

std::vector<std::uint64_t> encode_frame_window(const formats::TarIndex& index,
                                               const std::vector<std::uint64_t>& frame_begin, std::uint64_t begin,
                                               std::uint64_t end) {
  // From the sample whose frame `begin` lies in, each piece of a frame that
  // overlaps [begin, end): only those, so that a window of a sample of many
  // members holds the ranges it reads, not all of them.
  auto k = static_cast<std::uint64_t>(std::upper_bound(frame_begin.begin(), frame_begin.end(), begin) -
                                      frame_begin.begin() - 1);
  std::vector<std::uint64_t> window{0};
  bool first = true;
  const auto add = [&](std::uint64_t at, std::uint64_t bytes, std::uint64_t kind, std::uint64_t a, std::uint64_t b) {
    if (at + bytes <= begin || at >= end) return;
    if (first) window[0] = begin - at;
    first = false;
    window.insert(window.end(), {kind, a, b});
  };
  for (std::uint64_t at = frame_begin[k]; at < end && k < index.samples(); ++k) {
    add(at, formats::kTarFrameBytes, kPrefixEntry, index.frame_lengths[k], 0);
    at += formats::kTarFrameBytes;
    for (std::uint64_t r = index.first_range[k]; r < index.first_range[k + 1] && at < end; ++r) {
      add(at, index.ranges[r].bytes, kRangeEntry, index.ranges[r].offset, index.ranges[r].bytes);
      at += index.ranges[r].bytes;
    }
    at = frame_begin[k + 1];
  }
  return window;
}

void read_frame_window(const std::vector<std::uint64_t>& window, io::BlockFile& file, std::uint64_t offset,
                       std::byte* to, std::uint64_t bytes) {
  const auto garbled = [] { throw std::logic_error("staging: a garbled window of an archive's index"); };
  if (window.empty() || (window.size() - 1) % 3 != 0) garbled();
  io::ByteExtents frames;
  for (std::size_t at = 1; at < window.size(); at += 3) {
    if (window[at] == kPrefixEntry) {
      // The prefix's 8 bytes are the length's own, in the window (as append_tar_frames points at the index's).
      frames.append({nullptr, 0, formats::kTarFrameBytes, reinterpret_cast<const std::byte*>(&window[at + 1])});
    } else if (window[at] == kRangeEntry) {
      frames.append({&file, offset + window[at + 1], window[at + 2], nullptr});
    } else {
      garbled();
    }
  }
  if (window[0] + bytes > frames.bytes) garbled();
  io::ExtentReader reader(frames);
  reader.seek(window[0]);
  for (std::uint64_t done = 0; done < bytes;) {
    const std::uint64_t n = reader.read_now(to + done, bytes - done);
    if (n == 0) garbled();
    done += n;
  }
}

std::pair<std::uint64_t, std::uint64_t> frame_window_span(const std::vector<std::uint64_t>& window) {
  std::uint64_t first = UINT64_MAX, end = 0;
  for (std::size_t at = 1; at + 2 < window.size(); at += 3) {
    if (window[at] != kRangeEntry) continue;
    first = std::min(first, window[at + 1]);
    end = std::max(end, window[at + 1] + window[at + 2]);
  }
  return first < end ? std::make_pair(first, end) : std::make_pair(std::uint64_t{0}, std::uint64_t{0});
}

}  // namespace extshuffle::mpi
