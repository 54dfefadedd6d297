// Benchmark input: JSONL records {"id": I, "text": "..."} whose lengths,
// newline included, are lognormal (the machine-learning text datasets of the
// two-pass issue: median 440 bytes, mean about 800, a tail to 200 KB by
// default), a function of the seed only (xoshiro256**, Box-Muller). Every
// line is valid JSON (the text holds no quote or backslash). The file is
// exactly BYTES long; its last record takes what is left.
// Usage: generate_jsonl OUT BYTES [SEED [MEDIAN SIGMA MAX]]   (BYTES takes K/M/G)
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench_random.hpp"
#include "size_text.hpp"

namespace {

using extshuffle::bench::Xoshiro256;

// A standard normal draw (Box-Muller, one of the pair).
double normal(Xoshiro256& rng) {
  const double u = (static_cast<double>(rng.next() >> 11) + 0.5) / 9007199254740992.0;
  const double v = static_cast<double>(rng.next() >> 11) / 9007199254740992.0;
  return std::sqrt(-2.0 * std::log(u)) * std::cos(6.283185307179586 * v);
}

// Printable ASCII without '"' and '\\', so the text needs no escape.
void fill_text(Xoshiro256& rng, char* out, std::size_t n) {
  static const std::string alphabet = [] {
    std::string a;
    for (char c = 0x20; c < 0x7F; ++c) {
      if (c != '"' && c != '\\') a += c;
    }
    return a;
  }();
  for (std::size_t at = 0; at < n;) {
    std::uint64_t word = rng.next();
    for (int k = 0; k < 8 && at < n; ++k, word >>= 8) out[at++] = alphabet[(word & 0xFF) * alphabet.size() >> 8];
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 && argc != 4 && argc != 7) {
    std::fprintf(stderr, "usage: generate_jsonl OUT BYTES [SEED [MEDIAN SIGMA MAX]]\n");
    return 2;
  }
  const std::uint64_t total = parse_size("generate_jsonl", argv[2]);
  const std::uint64_t seed = argc >= 4 ? std::strtoull(argv[3], nullptr, 0) : 1;
  const double median = argc == 7 ? std::strtod(argv[4], nullptr) : 440;
  const double sigma = argc == 7 ? std::strtod(argv[5], nullptr) : 1.09;  // mean = median x e^(sigma^2/2) ~ 800
  const std::uint64_t longest = argc == 7 ? std::strtoull(argv[6], nullptr, 10) : 200000;
  std::FILE* out = std::fopen(argv[1], "wb");
  if (!out) {
    std::perror(argv[1]);
    return 1;
  }
  std::vector<char> record(longest + 64);
  Xoshiro256 rng(seed);
  std::uint64_t written = 0, records = 0, largest = 0;
  while (written < total) {
    const std::string head = "{\"id\": " + std::to_string(records) + ", \"text\": \"";
    const std::uint64_t skeleton = head.size() + 3;  // the closing "}\n
    auto length = static_cast<std::uint64_t>(median * std::exp(sigma * normal(rng)));
    length = std::clamp<std::uint64_t>(length, skeleton, longest);
    const std::uint64_t left = total - written;
    if (left < length + skeleton + 8) length = left;  // the last record takes what is left
    if (length < skeleton) break;                    // nothing but a few bytes: stop short
    std::copy(head.begin(), head.end(), record.begin());
    fill_text(rng, record.data() + head.size(), length - skeleton);
    std::copy_n("\"}\n", 3, record.data() + length - 3);
    if (std::fwrite(record.data(), 1, length, out) != length) {
      std::perror(argv[1]);
      return 1;
    }
    written += length;
    largest = std::max(largest, length);
    ++records;
  }
  if (std::fclose(out) != 0) {
    std::perror(argv[1]);
    return 1;
  }
  std::fprintf(stderr, "generate_jsonl: %llu bytes, %llu records, the longest %llu bytes\n",
               static_cast<unsigned long long>(written), static_cast<unsigned long long>(records),
               static_cast<unsigned long long>(largest));
  return 0;
}
