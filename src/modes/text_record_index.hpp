// Where each text record starts, so that records can be fetched by their
// number (--repeat draws them with replacement). Text records have no fixed
// size: one sequential pass finds them, and their N + 1 offsets are kept in
// RAM, or in scratch space when they do not fit in the budget (8 bytes a
// record: an input of a billion short lines has an 8 GB index).
#pragma once

#include <cstdint>
#include <memory>
#include <utility>

#include "extshuffle/formats/record_syntax.hpp"
#include "extshuffle/io/aligned_buffer.hpp"

namespace extshuffle::io {
class BlockFile;
}

namespace extshuffle::modes {

class TextRecordIndex {
 public:
  // Finds the `records` records in the `bytes` bytes at `offset` of `file`
  // (blank ones skipped with `skip_blank`, as the counting pass counted
  // them). The offsets stay in RAM when 8 (records + 1) bytes fit in
  // `memory_bytes`, else they are written to `scratch` at `scratch_offset`.
  // Throws InputError if the input no longer holds `records` records, and
  // IoError. Cost: one sequential read of the input; a record is held whole
  // while it is scanned (as by the counting pass).
  TextRecordIndex(io::BlockFile& file, std::uint64_t offset, std::uint64_t bytes, std::uint64_t records,
                  const formats::RecordSyntax& syntax, bool skip_blank, std::uint64_t memory_bytes,
                  io::BlockFile& scratch, std::uint64_t scratch_offset);

  // Record k's span in the file: from its first byte to the next record's
  // first byte (or the data's end). With skip_blank the span may hold blank
  // records after it. Cost: none in RAM, one 16-byte read from scratch.
  std::pair<std::uint64_t, std::uint64_t> span(std::uint64_t k);

  bool in_memory() const { return scratch_ == nullptr; }

 private:
  void append(std::uint64_t start);
  void write_out();
  std::uint64_t records_ = 0;
  io::AlignedBuffer storage_;        // page-aligned, as STXXL wants its buffers
  std::uint64_t* offsets_ = nullptr;  // all of them in RAM, or the unwritten tail
  std::size_t held_ = 0, capacity_ = 0;
  io::BlockFile* scratch_ = nullptr;  // where they are when not in RAM
  std::uint64_t scratch_offset_ = 0;
  std::uint64_t written_ = 0;  // offsets written to scratch so far
};

}  // namespace extshuffle::modes
