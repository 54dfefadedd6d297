#include "extshuffle/dataset/record_digest.hpp"

#include <cstdio>
#include <stdexcept>
#include <string>

#include "extshuffle/io/checkpoint_journal.hpp"

// Inlined so that XXH3's short-input path is specialised where the record
// size is a constant (see add_fixed).
#define XXH_INLINE_ALL
#include <xxhash.h>

namespace extshuffle::dataset {
namespace {

struct Accumulator {
  std::uint64_t sum_low, sum_high, xor_low, xor_high;

  void add(const XXH128_hash_t& h) {
    const std::uint64_t new_low = sum_low + h.low64;
    sum_high += h.high64 + (new_low < sum_low ? 1 : 0);
    sum_low = new_low;
    xor_low ^= h.low64;
    xor_high ^= h.high64;
  }
};

// Records of a size known at compile time: XXH3's branch on the length
// folds away, and the loop runs from registers.
template <std::size_t kRecordBytes>
void add_records(Accumulator& acc, const std::byte* data, std::size_t count) {
  for (std::size_t k = 0; k < count; ++k) acc.add(XXH3_128bits(data + kRecordBytes * k, kRecordBytes));
}

// Any other size: one out-of-line call per record keeps the loop small
// (inlining XXH3's whole length dispatch here measured slower).
[[gnu::noinline]] XXH128_hash_t hash_record(const std::byte* record, std::size_t bytes) {
  return XXH3_128bits(record, bytes);
}

}  // namespace

void RecordDigest::add_hash(std::uint64_t low, std::uint64_t high) {
  Accumulator acc{sum_low_, sum_high_, xor_low_, xor_high_};
  acc.add(XXH128_hash_t{low, high});
  sum_low_ = acc.sum_low;
  sum_high_ = acc.sum_high;
  xor_low_ = acc.xor_low;
  xor_high_ = acc.xor_high;
}

void RecordDigest::add(const std::byte* record, std::size_t bytes) {
  const XXH128_hash_t h = hash_record(record, bytes);
  add_hash(h.low64, h.high64);
  ++records_;
  bytes_ += bytes;
}

void RecordDigest::add_fixed(const std::byte* data, std::size_t bytes, std::size_t record_size) {
  if (record_size == 0 || bytes % record_size != 0) {
    throw std::invalid_argument("RecordDigest::add_fixed: " + std::to_string(bytes) +
                                " bytes are not whole records of " + std::to_string(record_size) + " bytes");
  }
  const std::size_t count = bytes / record_size;
  // A local copy: members would be reloaded after every call, as `data` may alias them.
  Accumulator acc{sum_low_, sum_high_, xor_low_, xor_high_};
  switch (record_size) {
    case 4: add_records<4>(acc, data, count); break;
    case 8: add_records<8>(acc, data, count); break;
    case 16: add_records<16>(acc, data, count); break;
    default:
      for (std::size_t k = 0; k < count; ++k) acc.add(hash_record(data + record_size * k, record_size));
  }
  sum_low_ = acc.sum_low;
  sum_high_ = acc.sum_high;
  xor_low_ = acc.xor_low;
  xor_high_ = acc.xor_high;
  records_ += count;
  bytes_ += bytes;
}

void RecordDigest::merge(const RecordDigest& other) {
  const std::uint64_t new_low = sum_low_ + other.sum_low_;
  sum_high_ += other.sum_high_ + (new_low < sum_low_ ? 1 : 0);
  sum_low_ = new_low;
  xor_low_ ^= other.xor_low_;
  xor_high_ ^= other.xor_high_;
  records_ += other.records_;
  bytes_ += other.bytes_;
}

std::string RecordDigest::to_string() const {
  char text[160];
  std::snprintf(text, sizeof text, "records=%llu bytes=%llu sum=%016llx%016llx xor=%016llx%016llx",
                static_cast<unsigned long long>(records_), static_cast<unsigned long long>(bytes_),
                static_cast<unsigned long long>(sum_high_), static_cast<unsigned long long>(sum_low_),
                static_cast<unsigned long long>(xor_high_), static_cast<unsigned long long>(xor_low_));
  return text;
}

std::string RecordDigest::state() const {
  io::FieldWriter out;
  for (const std::uint64_t word : {records_, bytes_, sum_low_, sum_high_, xor_low_, xor_high_}) out.u64(word);
  return out.text();
}

RecordDigest RecordDigest::from_state(std::string_view state) {
  io::FieldReader in(state);
  RecordDigest digest;
  for (std::uint64_t* word :
       {&digest.records_, &digest.bytes_, &digest.sum_low_, &digest.sum_high_, &digest.xor_low_, &digest.xor_high_}) {
    *word = in.u64();
  }
  return digest;
}

}  // namespace extshuffle::dataset
