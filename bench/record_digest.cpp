// Order-independent digest of a file of fixed-size records: the count, and the
// sum and xor of a 64-bit hash of every record. Two files hold the same
// multiset of records (with overwhelming probability) when their digests
// agree, so a benchmark can check that an output is a permutation of its input
// without sorting it. Usage: record_digest FILE RECORD_SIZE
//
// Lines mode, `record_digest FILE --lines`: the same digest over the lines of
// a text file, each hashed with its terminating newline; a last line without
// one is counted as if it had it (`shuf` and `sort` add it).
#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

// splitmix64's finaliser over 8-byte words, chained through the record.
std::uint64_t record_hash(const unsigned char* record, std::size_t size) {
  std::uint64_t h = 0x9E3779B97F4A7C15ull ^ size;
  for (std::size_t at = 0; at < size; at += 8) {
    std::uint64_t word = 0;
    std::memcpy(&word, record + at, size - at < 8 ? size - at : 8);
    h ^= word;
    h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9ull;
    h = (h ^ (h >> 27)) * 0x94D049BB133111EBull;
    h ^= h >> 31;
  }
  return h;
}

struct Digest {
  std::uint64_t count = 0, sum = 0, xored = 0;
  void add(const unsigned char* record, std::size_t size) {
    const std::uint64_t h = record_hash(record, size);
    sum += h;
    xored ^= h;
    ++count;
  }
  void print() const {
    std::printf("records=%llu sum=%016llx xor=%016llx\n", static_cast<unsigned long long>(count),
                static_cast<unsigned long long>(sum), static_cast<unsigned long long>(xored));
  }
};

int digest_lines(const char* path, int fd) {
  std::vector<unsigned char> buffer(std::size_t{8} << 20);
  Digest digest;
  std::size_t fill = 0;
  for (;;) {
    if (fill == buffer.size()) buffer.resize(buffer.size() * 2);  // a line longer than the buffer
    const ssize_t n = ::read(fd, buffer.data() + fill, buffer.size() - fill);
    if (n < 0) {
      std::perror(path);
      return 1;
    }
    const std::size_t scanned = fill;
    fill += static_cast<std::size_t>(n);
    // 1. Hash every complete line; keep the partial one for the next read.
    std::size_t start = 0;
    for (std::size_t at = scanned; at < fill;) {
      const void* newline = std::memchr(buffer.data() + at, '\n', fill - at);
      if (newline == nullptr) break;
      const std::size_t end = static_cast<const unsigned char*>(newline) - buffer.data() + 1;
      digest.add(buffer.data() + start, end - start);
      start = at = end;
    }
    std::memmove(buffer.data(), buffer.data() + start, fill - start);
    fill -= start;
    if (n == 0) break;
  }
  if (fill != 0) {  // 2. A last line without its newline.
    buffer.resize(fill + 1);
    buffer[fill] = '\n';
    digest.add(buffer.data(), fill + 1);
  }
  digest.print();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: record_digest FILE RECORD_SIZE | record_digest FILE --lines\n");
    return 2;
  }
  if (std::strcmp(argv[2], "--lines") == 0) {
    const int fd = ::open(argv[1], O_RDONLY);
    if (fd < 0) {
      std::perror(argv[1]);
      return 1;
    }
    return digest_lines(argv[1], fd);
  }
  const std::size_t size = std::strtoull(argv[2], nullptr, 10);
  const int fd = ::open(argv[1], O_RDONLY);
  if (fd < 0 || size == 0) {
    std::perror(argv[1]);
    return 1;
  }
  std::vector<unsigned char> buffer((std::size_t{8} << 20) / size * size);
  std::uint64_t count = 0, sum = 0, xored = 0;
  std::size_t fill = 0;
  for (;;) {
    const ssize_t n = ::read(fd, buffer.data() + fill, buffer.size() - fill);
    if (n < 0) {
      std::perror(argv[1]);
      return 1;
    }
    fill += static_cast<std::size_t>(n);
    const std::size_t whole = fill / size * size;
    for (std::size_t at = 0; at < whole; at += size) {
      const std::uint64_t h = record_hash(buffer.data() + at, size);
      sum += h;
      xored ^= h;
      ++count;
    }
    std::memmove(buffer.data(), buffer.data() + whole, fill - whole);
    fill -= whole;
    if (n == 0) break;
  }
  if (fill != 0) {
    std::fprintf(stderr, "%s: %zu trailing bytes\n", argv[1], fill);
    return 1;
  }
  std::printf("records=%llu sum=%016llx xor=%016llx\n", static_cast<unsigned long long>(count),
              static_cast<unsigned long long>(sum), static_cast<unsigned long long>(xored));
  return 0;
}
