// Throughput of the compressed streams (io/compression.hpp) on text-like
// data (JSONL lines of random words and numbers, about 5.7:1 for gzip -6, bench/jsonl_data.hpp).
//   compression_bench [MiB=256] [DIRECTORY=$TMPDIR or /tmp]
// prints, per codec and worker count:
//   BENCH compression codec=gzip op=write threads=1 mib=256 ratio=.. mb_per_s=.. mb_per_cpu_s=..
//   BENCH compression codec=gzip op=read threads=1 mib=256 mb_per_s=.. mb_per_cpu_s=..
// MB/s count uncompressed bytes (10^6 per MB) per wall second and per second
// of the process's CPU time (all threads; steadier than wall time on a
// shared machine). write: compression into a
// sink that discards; read: decompression of the same stream from a file in
// DIRECTORY (in the page cache after writing it) into a 1 MiB buffer.
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "extshuffle/io/compression.hpp"
#include "jsonl_data.hpp"

namespace {

using extshuffle::io::Codec;
using extshuffle::io::CompressingWriter;
using extshuffle::io::DecompressingReader;

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t mib = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 256;
  const char* env = std::getenv("TMPDIR");
  const std::string directory = argc > 2 ? argv[2] : (env && *env ? env : "/tmp");
  const std::string data = extshuffle::bench::jsonl_data(mib << 20);
  const double mb = static_cast<double>(data.size()) / 1e6;
  const std::string path = directory + "/compression_bench." + std::to_string(::getpid());

  struct Case {
    Codec codec;
    int threads;
  };
  for (const Case c : {Case{Codec::kGzip, 1}, Case{Codec::kZstd, 1}, Case{Codec::kZstd, 2}}) {
    const char* name = extshuffle::io::codec_name(c.codec).data();
    // 1. Compress into a discarding sink, then (untimed) into the file.
    std::uint64_t compressed = 0;
    {
      CompressingWriter writer(c.codec, [&](const void*, std::size_t n) { compressed += n; }, c.threads);
      const auto t0 = std::chrono::steady_clock::now();
      const double c0 = cpu_seconds();
      for (std::size_t at = 0; at < data.size(); at += 1 << 20) {
        writer.write(data.data() + at, std::min<std::size_t>(1 << 20, data.size() - at));
      }
      writer.finish();
      const double seconds = seconds_since(t0);
      std::printf("BENCH compression codec=%s op=write threads=%d mib=%zu ratio=%.3f mb_per_s=%.1f mb_per_cpu_s=%.1f\n",
                  name, c.threads, mib, static_cast<double>(data.size()) / compressed, mb / seconds,
                  mb / (cpu_seconds() - c0));
      std::fflush(stdout);
    }
    {
      const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
      if (fd < 0) throw std::runtime_error("cannot create " + path);
      CompressingWriter writer(
          c.codec,
          [&](const void* p, std::size_t n) {
            if (::write(fd, p, n) != static_cast<ssize_t>(n)) throw std::runtime_error("write failed");
          },
          c.threads);
      writer.write(data.data(), data.size());
      writer.finish();
      ::close(fd);
    }
    // 2. Decompress from the file and check the bytes.
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    DecompressingReader reader(fd, c.codec, path);
    std::vector<char> buffer(1 << 20);
    std::size_t at = 0;
    bool same = true;
    const auto t0 = std::chrono::steady_clock::now();
    const double c0 = cpu_seconds();
    for (std::size_t n; (n = reader.read(buffer.data(), buffer.size())) > 0; at += n) {
      same = same && at + n <= data.size() && data.compare(at, n, buffer.data(), n) == 0;
    }
    const double seconds = seconds_since(t0);
    const double cpu = cpu_seconds() - c0;
    ::close(fd);
    ::unlink(path.c_str());
    if (!same || at != data.size()) {
      std::fprintf(stderr, "compression_bench: %s round trip differs\n", name);
      return 1;
    }
    if (c.threads == 1) {
      std::printf("BENCH compression codec=%s op=read threads=1 mib=%zu mb_per_s=%.1f mb_per_cpu_s=%.1f\n", name, mib,
                  mb / seconds, mb / cpu);
    }
  }
  return 0;
}
