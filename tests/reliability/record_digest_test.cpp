// RecordDigest: an order-independent multiset digest (XXH3-128 per record,
// sum modulo 2^128 and xor). Equal multisets give equal digests whatever the
// order or split; a lost, duplicated or changed record changes the digest.
#include "extshuffle/dataset/record_digest.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <random>
#include <regex>
#include <stdexcept>
#include <vector>

#include "support/permutations.hpp"

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace extshuffle::dataset::record_digest_test {
namespace {

using testing::numbered_records;

RecordDigest digest_of(const std::vector<std::byte>& data, std::size_t record_size) {
  RecordDigest d;
  d.add_fixed(data.data(), data.size(), record_size);
  return d;
}

// Records in the order `order` (a permutation of their indices).
std::vector<std::byte> reordered(const std::vector<std::byte>& data, std::size_t record_size,
                                 const std::vector<std::size_t>& order) {
  std::vector<std::byte> out(data.size());
  for (std::size_t k = 0; k < order.size(); ++k) {
    std::memcpy(out.data() + k * record_size, data.data() + order[k] * record_size, record_size);
  }
  return out;
}

TEST(RecordDigest, EmptyDigestsAreEqualAndCountNothing) {
  RecordDigest a, b;
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.records(), 0u);
  b.add_fixed(nullptr, 0, 8);
  EXPECT_EQ(a, b);
  RecordDigest c;
  c.add(nullptr, 0);  // one empty record is a record
  EXPECT_NE(a, c);
  EXPECT_EQ(c.records(), 1u);
}

TEST(RecordDigest, AddFixedEqualsAddingEachRecord) {
  for (std::size_t record_size : {1, 3, 4, 8, 16, 17, 100, 240, 241, 4096}) {
    const auto data = numbered_records(300, record_size);
    RecordDigest one_by_one;
    for (std::size_t k = 0; k < 300; ++k) one_by_one.add(data.data() + k * record_size, record_size);
    EXPECT_EQ(digest_of(data, record_size), one_by_one) << "record size " << record_size;
    EXPECT_EQ(one_by_one.records(), 300u);
    EXPECT_EQ(one_by_one.bytes(), 300 * record_size);
  }
}

TEST(RecordDigest, AddFixedRejectsPartialRecords) {
  RecordDigest d;
  const std::vector<std::byte> data(20);
  EXPECT_THROW(d.add_fixed(data.data(), 20, 8), std::invalid_argument);
  EXPECT_THROW(d.add_fixed(data.data(), 20, 0), std::invalid_argument);
  EXPECT_EQ(d, RecordDigest{});
}

TEST(RecordDigest, OrderDoesNotMatter) {
  const auto data = numbered_records(1000, 8);
  std::vector<std::size_t> reversed(1000);
  for (std::size_t k = 0; k < 1000; ++k) reversed[k] = 999 - k;
  EXPECT_EQ(digest_of(data, 8), digest_of(reordered(data, 8, reversed), 8));
}

TEST(RecordDigest, MergeOfPartsEqualsTheWhole) {
  const auto data = numbered_records(1000, 12);
  RecordDigest first, second;
  first.add_fixed(data.data(), 12 * 377, 12);
  second.add_fixed(data.data() + 12 * 377, 12 * 623, 12);
  RecordDigest merged = second;
  merged.merge(first);
  EXPECT_EQ(merged, digest_of(data, 12));
  EXPECT_EQ(merged.records(), 1000u);
  EXPECT_EQ(merged.bytes(), 12000u);
}

// The digest's arithmetic against an independent one (128-bit integers of
// the compiler): with 100000 records the low word of the sum wraps tens of
// thousands of times, so a missing or wrong carry shows in the high word.
TEST(RecordDigest, MatchesAnIndependentComputation) {
  const std::size_t n = 100000, size = 8;
  const auto data = numbered_records(n, size);
  unsigned __int128 sum = 0, xored = 0;
  for (std::size_t k = 0; k < n; ++k) {
    const XXH128_hash_t h = XXH3_128bits(data.data() + k * size, size);
    const unsigned __int128 value = (static_cast<unsigned __int128>(h.high64) << 64) | h.low64;
    sum += value;
    xored ^= value;
  }
  char expected[160];
  std::snprintf(expected, sizeof expected, "records=100000 bytes=800000 sum=%016llx%016llx xor=%016llx%016llx",
                static_cast<unsigned long long>(sum >> 64), static_cast<unsigned long long>(sum),
                static_cast<unsigned long long>(xored >> 64), static_cast<unsigned long long>(xored));
  EXPECT_EQ(digest_of(data, size).to_string(), expected);
  // The same through merges of parts that wrap at other points.
  RecordDigest parts;
  for (std::size_t k = 0; k < n; k += 999) {
    RecordDigest part;
    part.add_fixed(data.data() + size * k, size * std::min<std::size_t>(999, n - k), size);
    parts.merge(part);
  }
  EXPECT_EQ(parts.to_string(), expected);
}

TEST(RecordDigest, DetectsALostADuplicatedAndAChangedRecord) {
  const std::size_t n = 1000, size = 16;
  const auto data = numbered_records(n, size);
  const RecordDigest original = digest_of(data, size);

  auto lost = data;
  lost.resize((n - 1) * size);  // the last record lost
  EXPECT_NE(digest_of(lost, size), original);

  auto duplicated = data;  // record 7 written over record 8: same count, one duplicate
  std::memcpy(duplicated.data() + 8 * size, duplicated.data() + 7 * size, size);
  EXPECT_NE(digest_of(duplicated, size), original);

  auto changed = data;  // one bit of one record
  changed[500 * size + 11] ^= std::byte{1};
  EXPECT_NE(digest_of(changed, size), original);

  // Two records swapping a byte between them: the same bytes overall, but
  // not the same records.
  auto swapped = data;
  std::swap(swapped[3 * size + 9], swapped[4 * size + 9]);
  EXPECT_NE(digest_of(swapped, size), original);

  // A record duplicated twice (xor of the pair cancels) still changes the sum.
  auto twice = data;
  std::memcpy(twice.data() + 20 * size, twice.data() + 19 * size, size);
  std::memcpy(twice.data() + 21 * size, twice.data() + 19 * size, size);
  EXPECT_NE(digest_of(twice, size), original);
}

// Property: for random inputs (random record sizes, counts and contents),
// every random permutation has the digest of the original, and the same
// permutation with one random record replaced by a copy of another does not.
TEST(RecordDigest, RandomPermutationsKeepTheDigestAndRandomDamageChangesIt) {
  std::mt19937_64 random(20240611);  // fixed: the test is deterministic
  for (int trial = 0; trial < 200; ++trial) {
    const std::size_t size = 1 + random() % 64;
    const std::size_t n = 2 + random() % 500;
    std::vector<std::byte> data(n * size);
    for (auto& b : data) b = static_cast<std::byte>(random());
    // Distinct records, so that a copy of one over another really changes the multiset.
    for (std::size_t k = 0; k < n; ++k) std::memcpy(data.data() + k * size, &k, std::min<std::size_t>(size, 2));
    if (size == 1 && n > 256) continue;  // cannot be distinct
    const RecordDigest original = digest_of(data, size);

    std::vector<std::size_t> order(n);
    for (std::size_t k = 0; k < n; ++k) order[k] = k;
    for (std::size_t k = n - 1; k > 0; --k) std::swap(order[k], order[random() % (k + 1)]);
    auto permuted = reordered(data, size, order);
    ASSERT_EQ(digest_of(permuted, size), original) << "trial " << trial;

    const std::size_t from = random() % n;
    std::size_t to = random() % n;
    if (to == from) to = (to + 1) % n;
    std::memcpy(permuted.data() + to * size, permuted.data() + from * size, size);
    ASSERT_NE(digest_of(permuted, size), original) << "trial " << trial;
  }
}

}  // namespace
}  // namespace extshuffle::dataset::record_digest_test
