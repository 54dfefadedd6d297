// The bucket store (io/bucket_store.hpp) on a memory-backed BlockFile: what
// goes into a bucket comes back as its extents, in order, through regions and
// overflow; splits stack and give their space back. Deterministic: the
// false-failure rate is 0.
#include "extshuffle/io/bucket_store.hpp"
#include "extshuffle/io/scratch_damage.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/same_bytes.hpp"

namespace extshuffle::io::bucket_store_test {
namespace {

std::string read_all(const ByteExtents& extents) {
  std::string bytes(extents.bytes, '\0');
  ExtentReader reader(extents);
  EXPECT_EQ(reader.read_now(reinterpret_cast<std::byte*>(bytes.data()), bytes.size()), bytes.size());
  return bytes;
}

void append(BucketWriter& writer, const std::string& text) {
  writer.append(reinterpret_cast<const std::byte*>(text.data()), text.size());
}

// A text of `bytes` bytes that differs at every position of a bucket.
std::string pattern(char first, std::size_t bytes) {
  std::string text(bytes, '\0');
  for (std::size_t k = 0; k < bytes; ++k) text[k] = static_cast<char>(first + k % 23);
  return text;
}

TEST(BucketStore, ExactRegionsAreAdjacentAndReadBackInOrder) {
  auto scratch = BlockFile::in_memory();
  BucketStore store(*scratch, 0);
  const std::vector<std::uint64_t> regions = {5000, 7, 12000};
  const bool kept[] = {true, true, true};
  std::vector<std::byte> buffers(2 * 3 * 1024);
  BucketStore::Split split(store, regions, kept, false, buffers.data(), 1024);
  const std::string texts[] = {pattern('a', 5000), pattern('A', 7), pattern('0', 12000)};
  // Interleaved appends, in pieces smaller and larger than a buffer.
  for (std::size_t at = 0; at < 12000; at += 1500) {
    for (int j = 0; j < 3; ++j) {
      if (at < texts[j].size()) append(split.writer(j), texts[j].substr(at, 1500));
    }
  }
  EXPECT_EQ(split.finish(), 5000u + 7 + 12000);
  for (int j = 0; j < 3; ++j) EXPECT_SAME_BYTES(read_all(split.bucket(j)), texts[j]) << "bucket " << j;
  const ByteExtents all = split.buckets(0, 3);
  EXPECT_EQ(all.extents.size(), 1u);  // adjacent: one request
  EXPECT_SAME_BYTES(read_all(all), texts[0] + texts[1] + texts[2]);
}

TEST(BucketStore, OverflowExtentsHoldWhatOutgrowsARegion) {
  auto scratch = BlockFile::in_memory();
  BucketStore store(*scratch, 8192);  // space below belongs to someone else
  scratch->write_now(pattern('x', 8192).data(), 0, 8192);
  const std::vector<std::uint64_t> regions = {100, 100};
  const bool kept[] = {true, true};
  std::vector<std::byte> buffers(2 * 2 * 256);
  BucketStore::Split split(store, regions, kept, true, buffers.data(), 256);
  const std::string big = pattern('a', 10000), small = pattern('K', 50);
  append(split.writer(0), big);
  append(split.writer(1), small);
  split.finish();
  EXPECT_GT(split.bucket(0).extents.size(), 1u);
  EXPECT_SAME_BYTES(read_all(split.bucket(0)), big);
  EXPECT_SAME_BYTES(read_all(split.bucket(1)), small);
  std::string below(8192, '\0');
  scratch->read_now(below.data(), 0, below.size());
  EXPECT_SAME_BYTES(below, pattern('x', 8192));  // untouched
}

// An exact region holds the records the plan sends: more can only come
// from position tags damaged in scratch, so the one scratch error.
TEST(BucketStore, ExactRegionsRefuseToOverflow) {
  auto scratch = BlockFile::in_memory();
  BucketStore store(*scratch, 0);
  const std::vector<std::uint64_t> regions = {10};
  const bool kept[] = {true};
  std::vector<std::byte> buffers(2 * 64);
  BucketStore::Split split(store, regions, kept, false, buffers.data(), 64);
  append(split.writer(0), pattern('a', 11));
  try {
    split.finish();
    FAIL() << "an exact region overflowed";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), kScratchDamaged);
  }
}

TEST(BucketStore, BucketsNotKeptStoreNothing) {
  auto scratch = BlockFile::in_memory();
  BucketStore store(*scratch, 0);
  const std::vector<std::uint64_t> regions = {100, 100};
  const bool kept[] = {true, false};
  std::vector<std::byte> buffers(2 * 2 * 64);
  BucketStore::Split split(store, regions, kept, false, buffers.data(), 64);
  append(split.writer(0), pattern('a', 100));
  append(split.writer(1), pattern('b', 100));
  EXPECT_EQ(split.finish(), 100u);
  EXPECT_SAME_BYTES(read_all(split.bucket(0)), pattern('a', 100));
  EXPECT_EQ(split.bucket(1).bytes, 0u);
}

TEST(BucketStore, SplitsStackAndGiveTheirSpaceBack) {
  auto scratch = BlockFile::in_memory();
  BucketStore store(*scratch, 0);
  const std::vector<std::uint64_t> regions = {5000};
  const bool kept[] = {true};
  std::vector<std::byte> buffers(2 * 2 * 512);
  std::uint64_t child_offset = 0;
  {
    BucketStore::Split parent(store, regions, kept, true, buffers.data(), 512);
    append(parent.writer(0), pattern('p', 5000));
    parent.finish();
    {
      BucketStore::Split child(store, regions, kept, true, buffers.data() + 1024, 512);
      append(child.writer(0), pattern('c', 5000));
      child.finish();
      child_offset = child.bucket(0).extents.front().offset;
      EXPECT_GE(child_offset, 5000u);  // above the parent's space
      EXPECT_SAME_BYTES(read_all(parent.bucket(0)), pattern('p', 5000));
    }
    BucketStore::Split sibling(store, regions, kept, true, buffers.data() + 1024, 512);
    append(sibling.writer(0), pattern('s', 10));
    sibling.finish();
    EXPECT_EQ(sibling.bucket(0).extents.front().offset, child_offset);  // the child's space, given back
  }
  BucketStore::Split next(store, regions, kept, true, buffers.data(), 512);
  append(next.writer(0), pattern('n', 10));
  next.finish();
  EXPECT_EQ(next.bucket(0).extents.front().offset, 0u);
}

}  // namespace
}  // namespace extshuffle::io::bucket_store_test
