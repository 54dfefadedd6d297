// Order-independent digest of a file of fixed-size records: the count, and the
// sum and xor of a 64-bit hash of every record. Two files hold the same
// multiset of records (with overwhelming probability) when their digests
// agree, so a benchmark can check that an output is a permutation of its input
// without sorting it. Usage: record_digest FILE RECORD_SIZE
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

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: record_digest FILE RECORD_SIZE\n");
    return 2;
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
