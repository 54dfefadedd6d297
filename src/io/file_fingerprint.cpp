// A file's fingerprint from sampled blocks (io/file_fingerprint.hpp).
#include "extshuffle/io/file_fingerprint.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <set>
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "extshuffle/errors.hpp"

namespace extshuffle::io {
namespace {

// SplitMix64's output function: where the k-th chosen block lies depends on
// every bit of the seed and of k. Not the permutation's generator: these
// positions decide only which bytes a fingerprint reads.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

void append_u64(XXH3_state_t* state, std::uint64_t value) {
  unsigned char bytes[8];
  for (int k = 0; k < 8; ++k) bytes[k] = static_cast<unsigned char>(value >> (8 * k));  // little-endian
  XXH3_128bits_update(state, bytes, sizeof bytes);
}

// Reads [offset, offset + bytes) of fd into `to`, whole.
void read_block(int fd, std::uint64_t offset, std::size_t bytes, char* to, const std::string& path) {
  while (bytes > 0) {
    const ssize_t n = ::pread(fd, to, bytes, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw IoError("cannot read", path, errno);
    if (n == 0) throw InputError("input '" + path + "': changed while being read (it ends before its size)");
    to += n;
    bytes -= static_cast<std::size_t>(n);
    offset += static_cast<std::uint64_t>(n);
  }
}

}  // namespace

std::string FileFingerprint::to_string() const {
  char hex[33];
  std::snprintf(hex, sizeof hex, "%016llx%016llx", static_cast<unsigned long long>(digest_high),
                static_cast<unsigned long long>(digest_low));
  return std::to_string(size_bytes) + ":" + hex;
}

std::vector<std::uint64_t> fingerprint_block_offsets(std::uint64_t size_bytes, std::uint64_t seed) {
  const std::uint64_t blocks = (size_bytes + kFingerprintBlockBytes - 1) / kFingerprintBlockBytes;
  std::set<std::uint64_t> chosen;
  if (blocks <= 2 + kFingerprintChosenBlocks) {
    for (std::uint64_t b = 0; b < blocks; ++b) chosen.insert(b);
  } else {
    chosen = {0, blocks - 1};
    // The k-th draw lands on one of the blocks between the two ends; a draw
    // that repeats one is not drawn again: at most a few blocks fewer.
    for (unsigned k = 0; k < kFingerprintChosenBlocks; ++k) chosen.insert(1 + mix(seed ^ mix(k)) % (blocks - 2));
  }
  std::vector<std::uint64_t> offsets;
  for (std::uint64_t b : chosen) offsets.push_back(b * kFingerprintBlockBytes);
  return offsets;
}

FileFingerprint fingerprint_file(int fd, std::uint64_t size_bytes, std::uint64_t seed, const std::string& path) {
  XXH3_state_t* state = XXH3_createState();
  if (state == nullptr) throw std::bad_alloc();
  XXH3_128bits_reset(state);
  append_u64(state, size_bytes);
  std::vector<char> block(kFingerprintBlockBytes);
  try {
    for (std::uint64_t offset : fingerprint_block_offsets(size_bytes, seed)) {
      const std::size_t bytes = static_cast<std::size_t>(std::min(kFingerprintBlockBytes, size_bytes - offset));
      read_block(fd, offset, bytes, block.data(), path);
      append_u64(state, offset);
      XXH3_128bits_update(state, block.data(), bytes);
    }
  } catch (...) {
    XXH3_freeState(state);
    throw;
  }
  const XXH128_hash_t digest = XXH3_128bits_digest(state);
  XXH3_freeState(state);
  return {size_bytes, digest.low64, digest.high64};
}

FileFingerprint fingerprint_path(const std::string& path, std::uint64_t seed) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw IoError("cannot open", path, errno);
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int error = errno;
    ::close(fd);
    throw IoError("cannot read", path, error);
  }
  try {
    const FileFingerprint fingerprint = fingerprint_file(fd, static_cast<std::uint64_t>(st.st_size), seed, path);
    ::close(fd);
    return fingerprint;
  } catch (...) {
    ::close(fd);
    throw;
  }
}

}  // namespace extshuffle::io
