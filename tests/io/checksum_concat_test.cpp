// io::crc32c_concat (io/crc32c.hpp): the CRC of two byte strings one after
// the other, from their CRCs and the second's length, against the CRC of
// the bytes themselves: every cut of a text (empty parts included), random
// parts of random lengths (a fixed seed), and a second part of more than
// 4 GiB of zeros (a length past 32 bits: crc32c over the zeros in 1 GiB
// pieces). Deterministic: the false-failure rate is 0.
#include "extshuffle/io/crc32c.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace extshuffle::io::checksum_concat_test {
namespace {

std::uint32_t crc_of(const std::string& bytes) { return crc32c(kCrc32cStart, bytes.data(), bytes.size()); }

TEST(Crc32cConcat, EveryCutOfATextGivesTheWholesCrc) {
  const std::string text = "The quick brown fox jumps over the lazy dog, twice: the quick brown fox.";
  for (std::size_t cut = 0; cut <= text.size(); ++cut) {
    const std::string a = text.substr(0, cut), b = text.substr(cut);
    EXPECT_EQ(crc32c_concat(crc_of(a), crc_of(b), b.size()), crc_of(text)) << "cut at " << cut;
  }
}

TEST(Crc32cConcat, RandomPartsFoldedInOrderGiveTheWholesCrc) {
  std::mt19937_64 draw(20261203);
  for (int trial = 0; trial < 200; ++trial) {
    std::string whole;
    std::uint32_t folded = kCrc32cStart;  // the CRC of nothing
    const int parts = 1 + static_cast<int>(draw() % 5);
    for (int p = 0; p < parts; ++p) {
      std::string part(draw() % 70000, '\0');
      for (char& c : part) c = static_cast<char>(draw());
      folded = crc32c_concat(folded, crc_of(part), part.size());
      whole += part;
    }
    ASSERT_EQ(folded, crc_of(whole)) << "trial " << trial;
  }
}

TEST(Crc32cConcat, ASecondPartPast4GiB) {
  const std::uint64_t bytes = (std::uint64_t{4} << 30) + 12345;
  const std::vector<char> zeros(std::size_t{1} << 30, 0);
  std::uint32_t b = kCrc32cStart;
  for (std::uint64_t done = 0; done < bytes;) {
    const std::uint64_t piece = std::min<std::uint64_t>(zeros.size(), bytes - done);
    b = crc32c(b, zeros.data(), piece);
    done += piece;
  }
  const std::string a = "records before";
  std::uint32_t whole = crc_of(a);
  for (std::uint64_t done = 0; done < bytes;) {
    const std::uint64_t piece = std::min<std::uint64_t>(zeros.size(), bytes - done);
    whole = crc32c(whole, zeros.data(), piece);
    done += piece;
  }
  EXPECT_EQ(crc32c_concat(crc_of(a), b, bytes), whole);
}

}  // namespace
}  // namespace extshuffle::io::checksum_concat_test
