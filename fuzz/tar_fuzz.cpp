// libFuzzer target: the tar archive reader (src/formats/tar.cpp), which
// reads untrusted archives: headers, pax records, GNU long names, sizes in
// octal and base-256. For any bytes, fed in pieces of any size (the first
// byte picks them), it either refuses them with one InputError, or indexes
// samples whose byte ranges lie inside the archive, in order, and whose
// frames' lengths are the sum of their ranges; with the sample callback
// (--verify), the frames it hands on are those lengths too.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "extshuffle/errors.hpp"
#include "extshuffle/formats/tar.hpp"

namespace {

void check(bool condition) {
  if (!condition) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using extshuffle::formats::TarIndex;
  using extshuffle::formats::TarScanner;
  if (size < 1) return 0;
  const std::size_t piece = 1 + data[0] % 97 * 7;
  const bool verify = (data[0] & 0x80) != 0;
  const std::vector<char> bytes(data + 1, data + size);  // exactly the bytes, for ASan
  std::vector<std::uint64_t> frames;
  TarScanner scanner("'fuzz.tar'", verify,
                     verify ? TarScanner::SampleSink([&](std::string_view frame) { frames.push_back(frame.size()); })
                            : TarScanner::SampleSink());
  try {
    for (std::size_t at = 0; at < bytes.size();) {
      const std::uint64_t skippable = scanner.skippable();
      if (skippable > 0) {
        const std::uint64_t n = std::min<std::uint64_t>(skippable, bytes.size() - at);
        scanner.skip(n);
        at += n;
        continue;
      }
      const std::size_t n = std::min(piece, bytes.size() - at);
      scanner.add(bytes.data() + at, n);
      at += n;
    }
    const TarIndex index = scanner.finish();
    check(index.first_range.size() == index.frame_lengths.size() + 1);
    std::uint64_t previous_end = 0;
    for (std::size_t s = 0; s + 1 < index.first_range.size(); ++s) {
      std::uint64_t sample_bytes = 0;
      for (std::uint64_t r = index.first_range[s]; r < index.first_range[s + 1]; ++r) {
        const auto& range = index.ranges[r];
        check(range.offset >= previous_end && range.offset + range.bytes <= bytes.size());
        previous_end = range.offset + range.bytes;
        sample_bytes += range.bytes;
      }
      check(index.frame_lengths[s] == sample_bytes);
      if (verify) check(s < frames.size() && frames[s] == extshuffle::formats::kTarFrameBytes + sample_bytes);
    }
  } catch (const extshuffle::InputError&) {
    // Refused: a corrupt, truncated or unsupported archive.
  }
  return 0;
}
