// Bulk terminator scans (formats/terminator_scan.hpp): every kernel this CPU
// has must find exactly the terminators a byte-by-byte loop finds, at any
// density, alignment and tail length, and stop at `max`.
#include "extshuffle/formats/terminator_scan.hpp"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace extshuffle::formats::terminator_scan_test {
namespace {

std::vector<std::uint64_t> reference_ends(const std::string& text, std::size_t from, char terminator,
                                          std::size_t max) {
  std::vector<std::uint64_t> ends;
  for (std::size_t k = from; k < text.size() && ends.size() < max; ++k) {
    if (text[k] == terminator) ends.push_back(k + 1 - from);
  }
  return ends;
}

// Text with a terminator at each byte with probability `density`; the
// other bytes include every value but the terminator.
std::string random_text(std::mt19937_64& random, std::size_t bytes, double density, char terminator) {
  std::bernoulli_distribution is_terminator(density);
  std::string text(bytes, 'x');
  for (char& c : text) {
    if (is_terminator(random)) {
      c = terminator;
    } else {
      do c = static_cast<char>(random()); while (c == terminator);
    }
  }
  return text;
}

std::vector<ScanKernel> kernels() {
  std::vector<ScanKernel> result;
  for (ScanKernel kernel : {ScanKernel::kPortable, ScanKernel::kAvx2}) {
    if (scan_kernel_supported(kernel)) result.push_back(kernel);
  }
  return result;
}

TEST(TerminatorScan, EveryKernelMatchesAByteLoop) {
  std::mt19937_64 random(7);
  for (char terminator : {'\n', '\0'}) {
    for (double density : {0.0, 0.002, 0.03, 0.3, 1.0}) {
      for (std::size_t bytes : {0, 1, 31, 32, 63, 64, 65, 127, 1000, 4099}) {
        const std::string text = random_text(random, bytes, density, terminator);
        for (std::size_t from : {std::size_t{0}, std::size_t{1}, std::size_t{7}}) {
          if (from > bytes) continue;
          for (std::size_t max : {std::size_t{0}, std::size_t{1}, std::size_t{5}, std::size_t{64}, std::size_t{65},
                                  std::size_t{100}, bytes + 1}) {
            const auto expected = reference_ends(text, from, terminator, max);
            for (ScanKernel kernel : kernels()) {
              // Room for what a kernel may store beyond the count (never beyond max).
              std::vector<std::uint64_t> ends(max + 1, 0xDEAD);
              const std::size_t found = find_record_ends(text.data() + from, text.data() + text.size(), terminator,
                                                         max, ends.data(), kernel);
              ASSERT_EQ(found, expected.size()) << "bytes " << bytes << " density " << density << " max " << max;
              ends.resize(found);
              EXPECT_EQ(ends, expected) << "bytes " << bytes << " density " << density << " max " << max;
              EXPECT_EQ(count_terminators(text.data() + from, text.data() + text.size(), terminator, kernel),
                        reference_ends(text, from, terminator, bytes + 1).size());
            }
          }
        }
      }
    }
  }
}

TEST(TerminatorScan, NeverWritesAtOrBeyondMax) {
  const std::string text(4096, '\n');  // a terminator at every byte
  for (ScanKernel kernel : kernels()) {
    for (std::size_t max : {0, 1, 3, 4, 63, 64, 65, 200}) {
      std::vector<std::uint64_t> ends(max + 8, 0xDEAD);
      EXPECT_EQ(find_record_ends(text.data(), text.data() + text.size(), '\n', max, ends.data(), kernel), max);
      for (std::size_t k = max; k < ends.size(); ++k) EXPECT_EQ(ends[k], 0xDEADu) << "max " << max << " slot " << k;
    }
  }
}

TEST(TerminatorScan, TheDefaultOverloadsAgreeWithTheKernels) {
  std::mt19937_64 random(11);
  const std::string text = random_text(random, 100000, 0.01, '\n');
  std::vector<std::uint32_t> narrow(text.size());
  std::vector<std::uint64_t> wide(text.size()), portable(text.size());
  const std::size_t n32 = find_record_ends(text.data(), text.data() + text.size(), '\n', text.size(), narrow.data());
  const std::size_t n64 = find_record_ends(text.data(), text.data() + text.size(), '\n', text.size(), wide.data());
  const std::size_t np = find_record_ends(text.data(), text.data() + text.size(), '\n', text.size(), portable.data(),
                                          ScanKernel::kPortable);
  ASSERT_EQ(n32, np);
  ASSERT_EQ(n64, np);
  ASSERT_GT(np, 500u);
  for (std::size_t k = 0; k < np; ++k) {
    ASSERT_EQ(narrow[k], portable[k]);
    ASSERT_EQ(wide[k], portable[k]);
  }
  EXPECT_EQ(count_terminators(text.data(), text.data() + text.size(), '\n'), np);
}

}  // namespace
}  // namespace extshuffle::formats::terminator_scan_test
