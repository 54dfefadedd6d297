// Finding where the output's records end, to cut it into shards and splits
// (docs/conventions.md, Record formats): the walk hands the output over as bytes of whole
// records (OutputSink), and a cut must fall between two of them. Fixed-size
// records are cut by arithmetic; text records by their record syntax
// (formats/record_syntax.hpp), so a CSV record whose quoted field holds
// newlines, or any framing the syntax knows, is never cut apart.
#pragma once

#include <cstddef>
#include <cstdint>

#include "extshuffle/formats/record_syntax.hpp"

namespace extshuffle::dataset {

class RecordSink;  // text_input.hpp

class RecordCutter {
 public:
  // `record_size` > 0: fixed-size records of that many bytes; 0: text
  // records of `syntax`.
  RecordCutter(std::size_t record_size, const formats::RecordSyntax& syntax);

  struct Cut {
    std::size_t bytes = 0;      // of the records taken, from the start
    std::uint64_t records = 0;  // how many
  };

  // The first min(`records`, all) records of [data, data + bytes), which
  // holds whole records. Cost: none for fixed-size records; for text,
  // counting terminators in bulk (several GB/s) where records end at every
  // terminator, and the boundaries found one record at a time otherwise.
  Cut take_records(const std::byte* data, std::size_t bytes, std::uint64_t records) const;

  // Records from the start of [data, data + bytes) while their bytes stay
  // within `max_bytes`; the first one in any case when `at_least_one` (a
  // record larger than the limit gets a shard of its own). Cost: locating
  // each record taken.
  Cut take_bytes(const std::byte* data, std::size_t bytes, std::uint64_t max_bytes, bool at_least_one) const;

  // Hands each record of [data, data + bytes), which holds whole records
  // (text: not tar frames), to `sink` with offsets from `base` (where
  // `data` lies in the file), in order: what an index of them needs
  // (--index). Records ending at every terminator go over in batches of
  // their ends (RecordSink::records), the others one at a time. Cost: that
  // of take_records() for all of them.
  void hand_records(const std::byte* data, std::size_t bytes, std::uint64_t base, RecordSink& sink) const;

  // The bytes of a cut that are written out: tar samples lose their frames' prefixes.
  std::uint64_t written_bytes(const Cut& cut) const;

 private:
  std::size_t record_size_;
  formats::RecordSyntax syntax_;
  bool plain_terminators_;  // every terminator ends a record: found in bulk
};

}  // namespace extshuffle::dataset
