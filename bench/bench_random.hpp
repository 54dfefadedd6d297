// The benchmark inputs' random numbers: xoshiro256** seeded by splitmix64,
// so every input is a function of its seed (bench/generate_lines.cpp,
// bench/generate_jsonl.cpp), and printable filler drawn from it.
#pragma once

#include <cstddef>
#include <cstdint>

namespace extshuffle::bench {

inline std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

class Xoshiro256 {
 public:
  explicit Xoshiro256(std::uint64_t seed) {
    for (auto& word : s_) word = splitmix64(seed);
  }
  std::uint64_t next() {
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }
  // Uniform in [0, range) by Lemire's multiply-shift (the bias, below 2^-32
  // for these ranges, is irrelevant for a benchmark input).
  std::uint32_t below(std::uint32_t range) {
    return static_cast<std::uint32_t>((next() >> 32) * range >> 32);
  }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t s_[4];
};


// Fills out[0..n) with printable characters, 8 per random word.
inline void fill_printable(Xoshiro256& rng, unsigned char* out, std::size_t n) {
  std::size_t at = 0;
  while (at < n) {
    std::uint64_t word = rng.next();
    const std::size_t take = n - at < 8 ? n - at : 8;
    for (std::size_t i = 0; i < take; ++i, word >>= 8) {
      out[at + i] = static_cast<unsigned char>(0x20 + ((word & 0xFF) * 95 >> 8));
    }
    at += take;
  }
}

}  // namespace extshuffle::bench
