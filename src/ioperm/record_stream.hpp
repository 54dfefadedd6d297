// A node's records read front to back, located in batches (docs/conventions.md, The walk):
// the one reader of the paths that take records one by one (a split whose
// chunks do not fit in memory, a leaf larger than memory, a node placed in
// RAM from a tagged bucket). The node's bytes are read ahead into a space
// while the previous batch is used; each batch is the whole records found
// in what has arrived, with their positions in the node: counted from
// `first_position` for records in plan order, or read from each record's
// position tag (position_tag.hpp) for records a split routed one by one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "extshuffle/io/byte_extents.hpp"
#include "position_tag.hpp"
#include "read_ahead_space.hpp"
#include "run_context.hpp"
#include "text_scan.hpp"

namespace extshuffle::ioperm {

// How records lie in bytes: fixed-size, or framed records found by their
// syntax (`scan` reads every framing: lines, TFRecord frames, tar samples).
struct RecordFraming {
  std::uint64_t record_size = 0;  // fixed-size records; 0: framed records found by `scan`
  TextScan scan;
  bool framed() const { return record_size == 0; }
};

struct RecordBatch {
  std::uint64_t count = 0;
  const std::byte* base = nullptr;
  const std::uint64_t* positions = nullptr;  // each record's position in the node
  const std::uint32_t* offsets = nullptr;    // where its bytes start, from base (after its tag)
  const std::uint32_t* lengths = nullptr;    // its bytes (text: with its terminator)
  std::uint64_t max_position = 0;
};

class RecordStream {
 public:
  // Arrays of a batch of at most `max_batch` records.
  static std::uint64_t arrays_bytes(std::uint64_t max_batch) { return 16 * max_batch + 192; }

  // `records` records in `data`, tagged with `tag` (the whole node, its
  // positions [0, records)) or in plan order from `first_position`; `space` (space_bytes <= 4 GiB) for reading, `arrays`
  // (arrays_bytes(max_batch)). `budget` names --memory in the error for a
  // record larger than the space.
  RecordStream(const io::ByteExtents& data, const RecordFraming& framing, std::optional<PositionTag> tag,
               std::uint64_t records, std::uint64_t first_position, std::byte* space, std::uint64_t space_bytes,
               std::byte* arrays, std::uint64_t max_batch, std::uint64_t budget, RunContext& ctx);
  RecordStream(const RecordStream&) = delete;
  RecordStream& operator=(const RecordStream&) = delete;

  // The next batch; the previous batch's bytes may be reused from now on.
  // False once every record has been handed out (and nothing but what the
  // framing allows follows them). Throws InputError when a record is larger
  // than the space or the bytes do not hold `records` records (Error when
  // they come from scratch: io/scratch_damage.hpp); with tags, Error also
  // when a tag lies outside [0, records) (checked before the batch is handed
  // out, so that no position read from scratch indexes anything unchecked)
  // or, after the last batch, when the tags were not every position once
  // (their sum: any one damaged tag is caught).
  bool next(RecordBatch& batch);
  // After next(): the bytes of the data up to the end of the batch, and the
  // position the next record takes (records in plan order).
  std::uint64_t consumed_bytes() const { return space_.data_offset(batch_end_); }
  std::uint64_t next_position() const { return next_position_; }

 private:
  std::uint64_t locate(std::uint64_t limit);

  const RecordFraming& framing_;
  std::optional<PositionTag> tag_;
  std::uint64_t records_, next_position_;
  ReadAheadSpace space_;
  std::uint64_t* positions_;
  std::uint32_t* offsets_;
  std::uint32_t* lengths_;
  std::uint64_t max_batch_, budget_;
  std::uint64_t batch_end_ = 0, located_ = 0;
  std::uint64_t position_sum_ = 0;  // of the positions handed out, modulo 2^64
};

}  // namespace extshuffle::ioperm
