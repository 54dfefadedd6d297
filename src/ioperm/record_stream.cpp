#include "record_stream.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "walk_support.hpp"
#include "extshuffle/errors.hpp"
#include "extshuffle/formats/terminator_scan.hpp"
#include "extshuffle/io/scratch_damage.hpp"

namespace extshuffle::ioperm {

RecordStream::RecordStream(const io::ByteExtents& data, const RecordFraming& framing, std::optional<PositionTag> tag,
                           std::uint64_t records, std::uint64_t first_position, std::byte* space,
                           std::uint64_t space_bytes, std::byte* arrays, std::uint64_t max_batch,
                           std::uint64_t budget, RunContext& ctx)
    : framing_(framing), tag_(tag), records_(records), next_position_(first_position),
      space_(data, space, space_bytes, ctx), max_batch_(max_batch), budget_(budget) {
  std::byte* cursor = arrays;
  positions_ = carve<std::uint64_t>(cursor, max_batch);
  offsets_ = carve<std::uint32_t>(cursor, max_batch);
  lengths_ = carve<std::uint32_t>(cursor, max_batch);
  if (tag_ && first_position != 0) throw std::invalid_argument("a tagged record stream holds its whole node");
  space_.start_read();
}

bool RecordStream::next(RecordBatch& batch) {
  space_.spend_to(batch_end_);  // the last batch is spent
  if (located_ == records_) {
    space_.expect_only_blank_records(framing_.scan, records_);
    // Tags in range and no two alike leave the positions' sum that of every
    // position once: one tag damaged into another position changes it.
    if (tag_ && position_sum_ != position_sum(records_)) io::throw_scratch_damaged();
    return false;
  }
  for (;;) {
    space_.finish_read();
    // Moving the unspent bytes down once half the space is spent costs at
    // most one move per byte read; moving them whenever the space is full
    // cost a move of the whole space per batch where batches are small.
    if (space_.begin() >= space_.capacity() / 2) batch_end_ -= space_.compact();
    const std::uint64_t found = locate(std::min(max_batch_, records_ - located_));
    if (found > 0) {
      space_.start_read();  // the next bytes arrive while this batch is used
      located_ += found;
      batch.count = found;
      batch.base = space_.space();
      batch.positions = positions_;
      batch.offsets = offsets_;
      batch.lengths = lengths_;
      batch.max_position = *std::max_element(positions_, positions_ + found);
      // Tags read from scratch are used as indices: checked first.
      if (tag_ && batch.max_position >= records_) io::throw_scratch_damaged();
      return true;
    }
    if (space_.at_end()) framing_.scan.throw_records_changed(records_);
    if (space_.begin() == 0 && space_.full()) throw_record_too_large(space_.capacity(), budget_);
    if (space_.begin() > 0) batch_end_ -= space_.compact();
    space_.start_read();
  }
}

// Finds up to `limit` whole records in the unspent bytes; sets batch_end_.
std::uint64_t RecordStream::locate(std::uint64_t limit) {
  std::byte* const space = space_.space();
  const std::byte* at = space + space_.begin();
  const std::byte* end = space + space_.fill();
  const std::uint32_t tag_bytes = tag_ ? tag_->width : 0;
  std::uint64_t k = 0;
  if (!framing_.framed()) {
    const std::uint64_t frame = tag_bytes + framing_.record_size;
    k = std::min<std::uint64_t>(limit, static_cast<std::uint64_t>(end - at) / frame);
    for (std::uint64_t e = 0; e < k; ++e, at += frame) {
      positions_[e] = tag_ ? tag_->read(at) : next_position_++;
      position_sum_ += positions_[e];
      offsets_[e] = static_cast<std::uint32_t>(at - space) + tag_bytes;
      lengths_[e] = static_cast<std::uint32_t>(framing_.record_size);
    }
  } else if (!tag_ && framing_.scan.plain_terminators()) {
    // Plain lines: their ends in bulk (lengths_ holds the ends meanwhile).
    const auto* text = reinterpret_cast<const char*>(at);
    k = formats::find_record_ends(text, reinterpret_cast<const char*>(end), framing_.scan.syntax.terminator, limit,
                                  lengths_);
    std::uint32_t start = 0;
    const auto base = static_cast<std::uint32_t>(at - space);
    for (std::uint64_t e = 0; e < k; ++e) {
      positions_[e] = next_position_++;
      offsets_[e] = base + start;
      const std::uint32_t stop = lengths_[e];
      lengths_[e] = stop - start;
      start = stop;
    }
    at += start;
  } else {
    for (; k < limit; ++k) {
      if (static_cast<std::uint64_t>(end - at) < tag_bytes) break;
      const std::byte* record = at + tag_bytes;
      const std::byte* stop = framing_.scan.next_record(record, end);  // passes blank records when filtering
      if (!stop) break;
      positions_[k] = tag_ ? tag_->read(at) : next_position_++;
      position_sum_ += positions_[k];
      offsets_[k] = static_cast<std::uint32_t>(record - space);
      lengths_[k] = static_cast<std::uint32_t>(stop - record);
      at = stop;
    }
  }
  batch_end_ = static_cast<std::uint64_t>(at - space);
  return k;
}

}  // namespace extshuffle::ioperm
