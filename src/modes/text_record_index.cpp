#include "text_record_index.hpp"

#include <algorithm>
#include <string>

#include "extshuffle/errors.hpp"
#include "extshuffle/formats/text_scan.hpp"
#include "extshuffle/io/block_file.hpp"

namespace extshuffle::modes {
namespace {

// Offsets go to scratch space in pieces of this many (8 MiB).
constexpr std::size_t kOffsetsPiece = std::size_t{1} << 20;
constexpr std::size_t kReadPiece = std::size_t{8} << 20;

}  // namespace

TextRecordIndex::TextRecordIndex(io::BlockFile& file, std::uint64_t offset, std::uint64_t bytes,
                                 std::uint64_t records, const formats::RecordSyntax& syntax, bool skip_blank,
                                 std::uint64_t memory_bytes, io::BlockFile& scratch, std::uint64_t scratch_offset)
    : records_(records) {
  if (8 * (records + 1) > memory_bytes) {
    scratch_ = &scratch;
    scratch_offset_ = scratch_offset;
    capacity_ = kOffsetsPiece;
  } else {
    capacity_ = records + 1;
  }
  storage_ = io::allocate_aligned(8 * std::max<std::size_t>(capacity_, 2));
  offsets_ = reinterpret_cast<std::uint64_t*>(storage_.get());
  const formats::TextScan scan{syntax, skip_blank};
  // 1. Records found piece by piece, in place; a record cut by a piece's end
  //    is carried over and completed with the next piece.
  std::string carry;               // an incomplete record, and what followed it so far
  std::uint64_t carry_offset = 0;  // the input offset of carry[0]
  std::uint64_t piece_offset = offset, found = 0;
  const auto find_records = [&](const char* text, std::size_t size, std::uint64_t text_offset) {
    const auto* at = reinterpret_cast<const std::byte*>(text);
    const auto* end = at + size;
    while (const std::byte* stop = scan.next_record(at, end)) {
      if (found == records) throw InputError(formats::records_changed_message(records));
      append(text_offset + static_cast<std::uint64_t>(at - reinterpret_cast<const std::byte*>(text)));
      ++found;
      at = stop;
    }
    return static_cast<std::size_t>(at - reinterpret_cast<const std::byte*>(text));  // blank records passed
  };
  io::read_sequentially(file, offset, bytes, kReadPiece, [&](const std::byte* data, std::size_t size) {
    const auto* text = reinterpret_cast<const char*>(data);
    if (carry.empty()) {
      const std::size_t used = find_records(text, size, piece_offset);
      carry.assign(text + used, size - used);
      carry_offset = piece_offset + used;
    } else {
      carry.append(text, size);
      const std::size_t used = find_records(carry.data(), carry.size(), carry_offset);
      carry.erase(0, used);
      carry_offset += used;
    }
    piece_offset += size;
  });
  // 2. A last record without its terminator ends at the data's end (unless
  //    it is blank and blank records are skipped).
  if (!carry.empty()) {
    const bool blank = skip_blank && formats::is_blank_record(carry.data(), carry.data() + carry.size() + 1);
    if (!blank) {
      if (found == records) throw InputError(formats::records_changed_message(records));
      append(carry_offset);
      ++found;
    }
  }
  if (found != records) throw InputError(formats::records_changed_message(records));
  append(offset + bytes);
  if (scratch_) write_out();  // the rest; the buffer then serves span()'s reads
}

void TextRecordIndex::write_out() {
  if (held_ > 0) scratch_->write_now(offsets_, scratch_offset_ + 8 * written_, 8 * held_);
  written_ += held_;
  held_ = 0;
}

void TextRecordIndex::append(std::uint64_t start) {
  offsets_[held_++] = start;
  if (scratch_ && held_ == capacity_) write_out();
}

std::pair<std::uint64_t, std::uint64_t> TextRecordIndex::span(std::uint64_t k) {
  if (!scratch_) return {offsets_[k], offsets_[k + 1]};
  scratch_->read_now(offsets_, scratch_offset_ + 8 * k, 16);
  return {offsets_[0], offsets_[1]};
}

}  // namespace extshuffle::modes
