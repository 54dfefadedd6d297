// Where a rank writes: one contiguous range of the output stream (what
// extshuffle writes to a single output file, header included), from output
// record `first_record` at stream byte `first_byte`. Every path of the
// distributed run that writes records hands them, whole and in output
// order, to one of these, so that an output cut into several files can
// take the stream's bytes the same way (by record and byte position).
#pragma once

#include <cstddef>
#include <cstdint>

#include "shared_output.hpp"

namespace extshuffle::mpi {

class OutputRange {
 public:
  OutputRange(SharedOutput& output, std::uint64_t first_record, std::uint64_t first_byte)
      : writer_(output, first_byte), first_record_(first_record) {}
  // The next bytes of the stream: whole records (or the header, on the
  // range that starts the stream).
  void write(const std::byte* data, std::uint64_t bytes) { writer_.write(data, bytes); }
  // Writes what is buffered and waits for every write. Throws IoError.
  void finish() { writer_.finish(); }
  std::uint64_t first_record() const { return first_record_; }
  std::uint64_t bytes_written() const { return writer_.bytes_written(); }

 private:
  RangeWriter writer_;
  std::uint64_t first_record_;
};

}  // namespace extshuffle::mpi
