// Writes a record index (dataset/record_index.hpp) while the records are
// found: it is the counting pass's RecordSink (an input's index, written by
// extshuffle --index-only) and the sink of the output pieces' records
// (--index: each piece's index, written as the piece is). Front to back, in
// one pass: the offsets of lines and TFRecord frames stream out as they
// come (8 bytes a record, 16 with --skip-empty, buffered 512 KiB at a
// time); a tar archive's members and sample ranges are held (about 40
// bytes a member, its name, and 24 a sample) and written at the end, as the
// counting pass holds them anyway.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "extshuffle/dataset/record_index.hpp"
#include "extshuffle/dataset/text_input.hpp"
#include "extshuffle/formats/tar.hpp"

namespace extshuffle::dataset {

// Where an index's bytes go, in order (an output file's writer).
using IndexBytes = std::function<void(const void* data, std::size_t bytes)>;

class RecordIndexWriter : public RecordSink {
 public:
  // Writes the preamble to `out` at once. `spans`: the records may have gaps
  // between them (blank records skipped): each is kept as (begin, end);
  // otherwise each begins where the one before ends and N + 1 offsets hold
  // them.
  RecordIndexWriter(IndexBytes out, bool spans);

  // The next record (lines, TFRecord frames): [begin, end) of the input.
  // Throws Error when a record does not start where the one before ended
  // (without spans): an index of gaps would be silently wrong.
  void record(std::uint64_t begin, std::uint64_t end) override;
  // The same for a batch from the bulk count (RecordSink::records), at a
  // store a record.
  void records(std::uint64_t begin, std::uint64_t base, const std::uint64_t* ends, std::size_t count) override;
  // The next member of a tar sample, samples and their members in order.
  void member(std::uint64_t sample, std::string_view name, std::uint64_t data_offset,
              std::uint64_t data_bytes) override;

  // After the last record: the arrays held back (`tar`: the archive's
  // sample ranges, with the members given), then `header` (its arrays are
  // filled in here; the rest is the caller's) and the footer. The records
  // given must number header.records. Throws Error otherwise.
  void finish(IndexHeader header, const formats::TarIndex* tar);

  std::uint64_t records() const { return records_; }
  // Where the last record given ends (0 before the first).
  std::uint64_t last_end() const { return last_end_; }

 private:
  void flush_streamed();
  void write(const void* data, std::size_t bytes);
  void pad_to_alignment();
  // Writes `bytes` bytes at `data` as array `name` of the header.
  void write_array(IndexHeader& header, const std::string& name, const std::string& dtype,
                   std::vector<std::uint64_t> shape, const void* data, std::uint64_t bytes);
  void finish_tar(IndexHeader& header, const formats::TarIndex& tar);

  IndexBytes out_;
  bool spans_;
  std::uint64_t written_ = 0;  // bytes of the index so far
  // Lines and frames: the array streamed from kIndexAlignment on.
  std::vector<std::uint64_t> pending_;  // not yet written
  std::uint64_t records_ = 0;
  std::uint64_t last_end_ = 0;
  // Tar: the members, held.
  std::vector<std::array<std::uint64_t, 3>> members_;  // data offset, data bytes, end of the name
  std::vector<std::uint64_t> member_first_;
  std::string names_;
};

}  // namespace extshuffle::dataset
