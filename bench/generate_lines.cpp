// Benchmark input: text lines of printable ASCII (0x20..0x7E) whose length,
// newline included, is uniform in [MIN, MAX] bytes, a function of the seed
// only (xoshiro256** seeded by splitmix64). The file is exactly BYTES long and
// ends with a newline; only its last line may be shorter than MIN to make the
// size come out exact. About 1 GB/s on one core of the development VM.
// With --binary instead of MIN MAX: BYTES uniformly random bytes from the same
// generator (the fixed-size record inputs; /dev/urandom gives ~150 MB/s here).
// Usage: generate_lines OUT BYTES [SEED [MIN MAX | --binary]]   (BYTES takes K/M/G, powers of 1024)
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <cstring>
#include <vector>

#include "bench_random.hpp"
#include "size_text.hpp"

namespace {

using extshuffle::bench::Xoshiro256;
using extshuffle::bench::fill_printable;

bool write_all(int fd, const unsigned char* data, std::size_t bytes) {
  for (std::size_t done = 0; done < bytes;) {
    const ssize_t n = ::write(fd, data + done, bytes - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  const bool binary = argc == 5 && std::strcmp(argv[4], "--binary") == 0;
  if (argc != 3 && argc != 4 && argc != 6 && !binary) {
    std::fprintf(stderr, "usage: generate_lines OUT BYTES [SEED [MIN MAX | --binary]]\n");
    return 2;
  }
  const std::uint64_t total_bytes = parse_size("generate_lines", argv[2]);
  const std::uint64_t seed = argc >= 4 ? std::strtoull(argv[3], nullptr, 0) : 1;
  const std::uint32_t min_length = argc == 6 ? std::strtoul(argv[4], nullptr, 10) : 20;
  const std::uint32_t max_length = argc == 6 ? std::strtoul(argv[5], nullptr, 10) : 200;
  if (min_length < 1 || max_length < min_length) {
    std::fprintf(stderr, "generate_lines: need 1 <= MIN <= MAX\n");
    return 2;
  }
  const int fd = ::open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    std::perror(argv[1]);
    return 1;
  }
  Xoshiro256 rng(seed);
  constexpr std::size_t kBufferBytes = std::size_t{8} << 20;
  std::vector<unsigned char> buffer(kBufferBytes + max_length);
  std::uint64_t written = 0, lines = 0;
  while (written < total_bytes) {
    if (binary) {  // random bytes, 8 per word
      const std::size_t fill = static_cast<std::size_t>(std::min<std::uint64_t>(kBufferBytes, total_bytes - written));
      for (std::size_t at = 0; at < fill; at += 8) {
        const std::uint64_t word = rng.next();
        std::memcpy(buffer.data() + at, &word, fill - at < 8 ? fill - at : 8);
      }
      if (!write_all(fd, buffer.data(), fill)) {
        std::perror(argv[1]);
        return 1;
      }
      written += fill;
      continue;
    }
    // 1. Lay out whole lines until the buffer is full or the file size reached.
    std::size_t fill = 0;
    while (fill < kBufferBytes && written + fill < total_bytes) {
      std::uint64_t length = min_length + rng.below(max_length - min_length + 1);
      const std::uint64_t left = total_bytes - written - fill;
      if (left <= max_length) {
        length = left;  // the last line takes what is left
      } else if (left - length < min_length) {
        length = left - min_length;  // leave room for one more line of at least MIN
      }
      fill_printable(rng, buffer.data() + fill, length - 1);
      buffer[fill + length - 1] = '\n';
      fill += length;
      ++lines;
    }
    // 2. Write it out.
    if (!write_all(fd, buffer.data(), fill)) {
      std::perror(argv[1]);
      return 1;
    }
    written += fill;
  }
  if (::close(fd) != 0) {
    std::perror(argv[1]);
    return 1;
  }
  if (binary) {
    std::fprintf(stderr, "generate_lines: %llu random bytes\n", static_cast<unsigned long long>(written));
    return 0;
  }
  std::fprintf(stderr, "generate_lines: %llu bytes, %llu lines\n",
               static_cast<unsigned long long>(written), static_cast<unsigned long long>(lines));
  return 0;
}
