// How a text input that fits in RAM is best held (docs/benchmarks.md, "Two
// passes"): read into fresh memory of its own, as the run did before, or
// mapped with io::MappedBytes and scanned where it lies, as it does now. Each
// mode counts the input's newlines as the counting pass does. Drop the page
// cache before each run to measure from the disk:
//   for m in read map read map; do sync; echo 3 > /proc/sys/vm/drop_caches; build/bench/map_vs_read FILE $m; done
// Prints one line: BENCH map_vs_read mode=M bytes=B seconds=S newlines=N
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "extshuffle/io/block_file.hpp"
#include "extshuffle/io/mapped_bytes.hpp"

namespace {

std::uint64_t count_newlines(const char* at, const char* end) {
  std::uint64_t n = 0;
  while ((at = static_cast<const char*>(std::memchr(at, '\n', static_cast<std::size_t>(end - at)))) != nullptr) {
    ++n;
    ++at;
  }
  return n;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 || (std::strcmp(argv[2], "read") != 0 && std::strcmp(argv[2], "map") != 0)) {
    std::fprintf(stderr, "usage: map_vs_read FILE read|map\n");
    return 2;
  }
  const std::string mode = argv[2];
  const auto file = extshuffle::io::BlockFile::open_input(argv[1]);
  const std::uint64_t bytes = file->size();
  const auto start = std::chrono::steady_clock::now();
  std::uint64_t newlines = 0;
  if (mode == "read") {
    // As the arena was: huge pages asked for, read in pieces of 8 MiB.
    constexpr std::size_t kAlign = std::size_t{2} << 20, kPiece = std::size_t{8} << 20;
    auto* memory = static_cast<char*>(std::aligned_alloc(kAlign, (bytes + kAlign) / kAlign * kAlign));
    (void)madvise(memory, bytes, MADV_HUGEPAGE);
    const int fd = ::open(argv[1], O_RDONLY);
    for (std::uint64_t at = 0; at < bytes;) {
      const ssize_t n = ::read(fd, memory + at, std::min<std::uint64_t>(kPiece, bytes - at));
      if (n <= 0) return 1;
      at += static_cast<std::uint64_t>(n);
    }
    ::close(fd);
    newlines = count_newlines(memory, memory + bytes);
    std::free(memory);
  } else {
    auto mapped = extshuffle::io::MappedBytes::map(*file, 0, bytes, argv[1]);
    if (!mapped) return 1;
    mapped->expect_sequential(true);
    const auto* text = reinterpret_cast<const char*>(mapped->data());
    newlines = count_newlines(text, text + bytes);
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("BENCH map_vs_read mode=%s bytes=%llu seconds=%.3f newlines=%llu\n", mode.c_str(),
              static_cast<unsigned long long>(bytes), seconds, static_cast<unsigned long long>(newlines));
  return 0;
}
