// zlib against Intel ISA-L's igzip on the same data in one run, for the
// .gz input and output of io/compression.hpp: which engine is faster at
// decompression (any valid gzip stream, here zlib -6's and igzip's) and at
// compression (zlib levels 6 and 1, igzip levels 1 to 3), and the ratio each
// reaches. Both sides stream through 1 MiB buffers, as the library does; every
// stream is decoded back by the other engine and compared with the input.
//   gzip_engines_bench [MiB=256] [REPEATS=3]
// prints one line per engine and operation (best of REPEATS):
//   BENCH gzip_engine engine=zlib op=deflate level=6 mib=256 ratio=.. mb_per_s=..
//   BENCH gzip_engine engine=isal op=inflate stream=zlib6 mib=256 mb_per_s=..
// MB/s count uncompressed bytes (10^6 per MB) per wall second, one thread.
#include <isa-l/igzip_lib.h>
#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_timer.hpp"
#include "jsonl_data.hpp"

namespace {

using extshuffle::bench::best_seconds;
using Bytes = std::vector<unsigned char>;
constexpr std::size_t kPiece = std::size_t{1} << 20;

Bytes zlib_deflate(const std::string& data, int level) {
  z_stream s{};
  if (deflateInit2(&s, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) throw std::runtime_error("zlib");
  Bytes out(kPiece), packed;
  for (std::size_t at = 0;;) {
    const std::size_t piece = std::min(kPiece, data.size() - at);
    s.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data() + at));
    s.avail_in = static_cast<uInt>(piece);
    at += piece;
    const int flush = at == data.size() ? Z_FINISH : Z_NO_FLUSH;
    int rc;
    do {
      s.next_out = out.data();
      s.avail_out = static_cast<uInt>(out.size());
      rc = deflate(&s, flush);
      packed.insert(packed.end(), out.data(), out.data() + (out.size() - s.avail_out));
    } while (s.avail_out == 0 || (flush == Z_FINISH && rc != Z_STREAM_END));
    if (flush == Z_FINISH) break;
  }
  deflateEnd(&s);
  return packed;
}

Bytes isal_deflate_stream(const std::string& data, int level) {
  static const std::uint32_t kLevelBuffer[] = {0, ISAL_DEF_LVL1_DEFAULT, ISAL_DEF_LVL2_DEFAULT, ISAL_DEF_LVL3_DEFAULT};
  Bytes level_buffer(kLevelBuffer[level]), out(kPiece), packed;
  isal_zstream s;
  isal_deflate_init(&s);
  s.level = static_cast<std::uint32_t>(level);
  s.level_buf = level_buffer.data();
  s.level_buf_size = static_cast<std::uint32_t>(level_buffer.size());
  s.gzip_flag = IGZIP_GZIP;
  for (std::size_t at = 0;;) {
    const std::size_t piece = std::min(kPiece, data.size() - at);
    s.next_in = reinterpret_cast<std::uint8_t*>(const_cast<char*>(data.data() + at));
    s.avail_in = static_cast<std::uint32_t>(piece);
    at += piece;
    s.end_of_stream = at == data.size();
    do {
      s.next_out = out.data();
      s.avail_out = static_cast<std::uint32_t>(out.size());
      if (isal_deflate(&s) != COMP_OK) throw std::runtime_error("isal_deflate");
      packed.insert(packed.end(), out.data(), out.data() + (out.size() - s.avail_out));
    } while (s.avail_in > 0 || (s.end_of_stream && s.internal_state.state != ZSTATE_END));
    if (s.end_of_stream) break;
  }
  return packed;
}

std::string zlib_inflate(const Bytes& packed) {
  z_stream s{};
  inflateInit2(&s, 15 + 16);
  std::string out(kPiece, '\0'), data;
  s.next_in = const_cast<Bytef*>(packed.data());
  s.avail_in = static_cast<uInt>(packed.size());
  int rc;
  do {
    s.next_out = reinterpret_cast<Bytef*>(out.data());
    s.avail_out = static_cast<uInt>(out.size());
    rc = inflate(&s, Z_NO_FLUSH);
    data.append(out.data(), out.size() - s.avail_out);
  } while (rc == Z_OK);
  inflateEnd(&s);
  if (rc != Z_STREAM_END) throw std::runtime_error("zlib inflate failed");
  return data;
}

std::string isal_inflate_stream(const Bytes& packed) {
  inflate_state s;
  isal_inflate_init(&s);
  s.crc_flag = ISAL_GZIP;
  s.next_in = const_cast<std::uint8_t*>(packed.data());
  s.avail_in = static_cast<std::uint32_t>(packed.size());
  std::string out(kPiece, '\0'), data;
  while (s.block_state != ISAL_BLOCK_FINISH) {
    s.next_out = reinterpret_cast<std::uint8_t*>(out.data());
    s.avail_out = static_cast<std::uint32_t>(out.size());
    if (isal_inflate(&s) != ISAL_DECOMP_OK) throw std::runtime_error("isal_inflate failed");
    data.append(out.data(), out.size() - s.avail_out);
  }
  return data;
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t mib = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 256;
  const int repeats = argc > 2 ? std::atoi(argv[2]) : 3;
  const std::string data = extshuffle::bench::jsonl_data(mib << 20);
  const double mb = static_cast<double>(data.size()) / 1e6;
  // 1. Compression, each stream checked by the other engine's decoder.
  struct Encoder {
    const char* engine;
    int level;
    Bytes (*encode)(const std::string&, int);
  };
  Bytes zlib6;
  for (const Encoder e : {Encoder{"zlib", 6, zlib_deflate}, Encoder{"zlib", 1, zlib_deflate},
                          Encoder{"isal", 1, isal_deflate_stream}, Encoder{"isal", 2, isal_deflate_stream},
                          Encoder{"isal", 3, isal_deflate_stream}}) {
    Bytes packed;
    const double seconds = best_seconds(repeats, [&] { packed = e.encode(data, e.level); });
    const bool zlib_made = e.engine[0] == 'z';
    if ((zlib_made ? isal_inflate_stream(packed) : zlib_inflate(packed)) != data) {
      std::fprintf(stderr, "gzip_engines_bench: %s level %d does not round-trip\n", e.engine, e.level);
      return 1;
    }
    std::printf("BENCH gzip_engine engine=%s op=deflate level=%d mib=%zu ratio=%.3f mb_per_s=%.1f\n", e.engine,
                e.level, mib, static_cast<double>(data.size()) / static_cast<double>(packed.size()), mb / seconds);
    std::fflush(stdout);
    if (zlib_made && e.level == 6) zlib6 = packed;
  }
  // 2. Decompression of zlib -6's stream (what gzip(1) writes) by both.
  for (const bool isal : {false, true}) {
    std::string back;
    const double seconds = best_seconds(repeats, [&] { back = isal ? isal_inflate_stream(zlib6) : zlib_inflate(zlib6); });
    if (back != data) return 1;
    std::printf("BENCH gzip_engine engine=%s op=inflate stream=zlib6 mib=%zu mb_per_s=%.1f\n", isal ? "isal" : "zlib",
                mib, mb / seconds);
    std::fflush(stdout);
  }
  return 0;
}
