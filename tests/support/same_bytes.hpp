// Byte-for-byte comparisons of outputs that can be large: on failure they
// print both sizes and the first difference with a few bytes around it,
// never the whole of either (GoogleTest's EXPECT_EQ prints both strings and
// their diff: a 3 MB output against its expectation once printed 1.29 GB).
//   EXPECT_SAME_BYTES(read_file(out), expected) << "context";
//   EXPECT_DIFFERENT_BYTES(read_file(out), read_file(in));
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <string>
#include <string_view>

namespace extshuffle::testing {

// `bytes` from `from` (at most `count`), printable ASCII as is, the rest as \xHH.
inline std::string quoted_bytes(std::string_view bytes, std::size_t from, std::size_t count) {
  std::string text = "\"";
  for (std::size_t k = from; k < bytes.size() && k < from + count; ++k) {
    const auto c = static_cast<unsigned char>(bytes[k]);
    if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
      text += static_cast<char>(c);
    } else {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", c);
      text += escaped;
    }
  }
  return text + (from + count < bytes.size() ? "\"..." : "\"");
}

// Where `a` and `b` first differ: an index below both sizes, or the smaller size.
inline std::size_t first_difference(std::string_view a, std::string_view b) {
  return static_cast<std::size_t>(std::mismatch(a.begin(), a.begin() + std::min(a.size(), b.size()), b.begin()).first -
                                  a.begin());
}

// For EXPECT_PRED_FORMAT2: success when `a` and `b` hold the same bytes.
inline ::testing::AssertionResult bytes_are_same(const char* a_text, const char* b_text, std::string_view a,
                                                 std::string_view b) {
  if (a == b) return ::testing::AssertionSuccess();
  constexpr std::size_t kContext = 24;  // bytes shown before and after the difference
  const std::size_t at = first_difference(a, b);
  const std::size_t from = at > kContext ? at - kContext : 0;
  return ::testing::AssertionFailure() << a_text << " (" << a.size() << " bytes) and " << b_text << " (" << b.size()
                                       << " bytes) first differ at byte " << at << ":\n  "
                                       << quoted_bytes(a, from, 2 * kContext) << "\n  "
                                       << quoted_bytes(b, from, 2 * kContext) << "\n  (from byte " << from << ")";
}

// For EXPECT_PRED_FORMAT2: success when `a` and `b` differ somewhere.
inline ::testing::AssertionResult bytes_differ(const char* a_text, const char* b_text, std::string_view a,
                                               std::string_view b) {
  if (a != b) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << a_text << " and " << b_text << " hold the same " << a.size() << " bytes";
}

}  // namespace extshuffle::testing

#define EXPECT_SAME_BYTES(a, b) EXPECT_PRED_FORMAT2(::extshuffle::testing::bytes_are_same, a, b)
#define ASSERT_SAME_BYTES(a, b) ASSERT_PRED_FORMAT2(::extshuffle::testing::bytes_are_same, a, b)
#define EXPECT_DIFFERENT_BYTES(a, b) EXPECT_PRED_FORMAT2(::extshuffle::testing::bytes_differ, a, b)
