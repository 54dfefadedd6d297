// A node's bytes read ahead into a space while the bytes before them are
// used (docs/conventions.md, The walk): [begin, fill) holds what was read and not yet spent,
// the next read lands after fill. Used by the text split with its chunks in
// memory (text_chunk_groups.cpp) and the record stream (record_stream.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "extshuffle/io/byte_extents.hpp"
#include "extshuffle/errors.hpp"
#include "run_context.hpp"
#include "text_scan.hpp"

namespace extshuffle::ioperm {

class ReadAheadSpace {
 public:
  ReadAheadSpace(const io::ByteExtents& data, std::byte* space, std::uint64_t capacity, RunContext& ctx)
      : space_(space), capacity_(capacity), ctx_(ctx), reader_(data) {}

  std::byte* space() const { return space_; }
  std::uint64_t capacity() const { return capacity_; }
  std::uint64_t begin() const { return begin_; }
  std::uint64_t fill() const { return fill_; }
  bool full() const { return fill_ == capacity_; }
  bool at_end() const { return reader_.at_end(); }
  // The bytes before `begin` are spent.
  void spend_to(std::uint64_t begin) { begin_ = begin; }
  // Where byte `at` of the space lies in the data: bytes moved out by
  // compact() are behind it.
  std::uint64_t data_offset(std::uint64_t at) const { return compacted_ + at; }

  // Starts reading into [fill, capacity) unless a read is in flight or the
  // data is all read.
  void start_read() {
    if (!reading_ && !reader_.at_end() && fill_ < capacity_) {
      reader_.start(space_ + fill_, capacity_ - fill_);
      reading_ = true;
    }
  }
  // Waits for the read in flight (its time is reading time).
  void finish_read() {
    if (!reading_) return;
    PhaseTimer timer(ctx_.stats.seconds_reading);
    const std::uint64_t got = reader_.finish();
    fill_ += got;
    ctx_.stats.bytes_read += got;
    reading_ = false;
  }
  // Moves the unspent bytes to the start of the space (no read in flight);
  // returns how far they moved.
  std::uint64_t compact() {
    const std::uint64_t moved = begin_;
    compacted_ += moved;
    std::memmove(space_, space_ + begin_, fill_ - begin_);
    fill_ -= begin_;
    begin_ = 0;
    return moved;
  }
  // After a node's last record: nothing may follow but, when `scan` skips
  // blank records, blank records. Throws InputError saying the input no
  // longer holds the `records` records it was counted with (Error, read
  // back from scratch: scratch space is damaged).
  void expect_only_blank_records(const TextScan& scan, std::uint64_t records) {
    for (;;) {
      finish_read();
      const std::byte* at = space_ + begin_;
      const std::byte* end = space_ + fill_;
      if (at != end) {
        if (!scan.filter_blank || scan.next_record(at, end)) scan.throw_records_changed(records);
        begin_ = static_cast<std::uint64_t>(at - space_);  // the blank records passed
      }
      if (reader_.at_end()) {
        if (begin_ != fill_) scan.throw_records_changed(records);
        return;
      }
      if (begin_ == 0 && full()) scan.throw_records_changed(records);
      compact();
      start_read();
    }
  }

 private:
  std::byte* space_;
  std::uint64_t capacity_;
  RunContext& ctx_;
  io::ExtentReader reader_;
  std::uint64_t fill_ = 0, begin_ = 0;
  std::uint64_t compacted_ = 0;  // bytes of the data before the space's first byte
  bool reading_ = false;
};

}  // namespace extshuffle::ioperm
