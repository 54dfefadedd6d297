// A file's fingerprint from sampled blocks: its size and an XXH3-128 digest
// of its first block, its last block and a few blocks chosen by a seed.
// Cheap enough for every input of a run (at most 10 blocks of 64 KiB read,
// whatever the file's size), it tells two files apart when their sizes
// differ or when they differ anywhere in a sampled block. It is a check
// against accident (a file replaced, edited, truncated and refilled, another
// copy on another machine), not against someone choosing bytes on purpose:
// a change outside every sampled block keeps the fingerprint. Used where a
// run must know that bytes are the ones it saw or that another process sees
// (docs/design.md "Fingerprints of inputs").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace extshuffle::io {

inline constexpr std::uint64_t kFingerprintBlockBytes = 64 * 1024;
// Blocks chosen by the seed, beside the first and the last.
inline constexpr unsigned kFingerprintChosenBlocks = 8;

struct FileFingerprint {
  std::uint64_t size_bytes = 0;
  std::uint64_t digest_low = 0, digest_high = 0;  // XXH3-128 of the size and the sampled blocks
  bool operator==(const FileFingerprint&) const = default;
  // The size and 32 hex digits, "<size>:<digest>", for files and messages.
  std::string to_string() const;
};

// The offsets of the sampled blocks of a file of `size_bytes`, ascending and
// distinct, each a multiple of kFingerprintBlockBytes: the first, the last
// and up to kFingerprintChosenBlocks chosen by `seed` (every block when the
// file has no more than 2 + kFingerprintChosenBlocks of them; none when it
// is empty). A pure function of its arguments.
std::vector<std::uint64_t> fingerprint_block_offsets(std::uint64_t size_bytes, std::uint64_t seed);

// The fingerprint of the `size_bytes` bytes of `fd` (read with pread: the
// descriptor's offset is untouched), sampled with `seed`. Throws IoError
// ("cannot read", `path`) when a read fails, and InputError when the file
// ends before `size_bytes` (it shrank while being read).
FileFingerprint fingerprint_file(int fd, std::uint64_t size_bytes, std::uint64_t seed, const std::string& path);

// The same for a path: opened read-only, its size from fstat. Throws
// IoError ("cannot open", `path`) when it cannot be opened.
FileFingerprint fingerprint_path(const std::string& path, std::uint64_t seed);

}  // namespace extshuffle::io
