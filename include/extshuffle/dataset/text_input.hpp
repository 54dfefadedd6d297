// The counting pass over framed input of lines or TFRecord frames (tar
// archives: tar_input.hpp; docs/conventions.md, Record formats): framed records
// need their number N before the plan exists. One sequential read of the
// input finds N, the header lines kept on top, and whether the last record
// lacks its terminator (it gets one, as GNU shuf does); CSV quoting errors
// are found here, before any output is written.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "extshuffle/formats/record_syntax.hpp"

namespace extshuffle::io {
class BlockFile;
}

namespace extshuffle::dataset {

class RecordDigest;

// Receives the records a counting pass finds, in input order (an index of
// them: dataset/record_index_writer.hpp): each as [begin, end), byte
// offsets from the input's start, its terminator included (a last record
// that lacks one ends at the input's end; a TFRecord record is its frame).
// Header lines and skipped blank records are not records. A tar archive's
// members come with their sample (tar_input.hpp).
class RecordSink {
 public:
  virtual ~RecordSink() = default;
  virtual void record(std::uint64_t begin, std::uint64_t end) = 0;
  // `count` records one after the other (the bulk count of terminators):
  // the first from `begin`, record k ending at `base` + ends[k].
  virtual void records(std::uint64_t begin, std::uint64_t base, const std::uint64_t* ends, std::size_t count) {
    for (std::size_t k = 0; k < count; ++k) {
      record(begin, base + ends[k]);
      begin = base + ends[k];
    }
  }
  // A regular member of tar sample `sample` (counted from 0): its name as
  // the archive gives it (pax and GNU long names applied) and its data.
  virtual void member(std::uint64_t sample, std::string_view name, std::uint64_t data_offset,
                      std::uint64_t data_bytes) {
    (void)sample, (void)name, (void)data_offset, (void)data_bytes;
  }
};

struct TextCount {
  std::uint64_t header_bytes = 0;  // the first header lines, at the start of the input
  std::uint64_t records = 0;       // records after the header (blank ones not counted when skipped)
  bool add_terminator = false;     // the input's last record (or header line) lacks its terminator
  std::uint64_t longest_record_bytes = 0;  // the longest record after the header, with its terminator
  double record_bytes_squared = 0;         // the sum of the squares of the records' lengths (their spread)
};

// The counting pass of one input part way through (--checkpoint: docs/cli.md
// "Resuming a run"), past the header, counted through byte `through` of the
// input: plain lines, whose terminators are counted in bulk (`through` may
// fall inside a record), or record by record (quoted CSV, blank records
// skipped, TFRecord frames: `through` is where a record starts). It is all
// a count needs to go on from there: a rerun of the same input counts the
// rest and gets the count (the sum of squares to the bit) that one pass
// gets.
struct TextCountProgress {
  std::uint64_t through = 0;  // bytes of the input counted
  TextCount before;           // the header, and the records counted one by one (before the bulk count)
  std::uint64_t records = 0, longest_record_bytes = 0;  // the bulk count's records so far, and the longest
  std::uint64_t open_bytes = 0;                         // of the record in progress at `through`
  double record_bytes_squared = 0;
  char last_byte = 0;       // the input's byte before `through`
  bool by_records = false;  // counted record by record: all of it in `before`
};

// Where a counting pass starts, and whom it tells how far it got. Taken
// by a count read from a file (no digest, no mapping, no sink), from a
// progress of its own kind (bulk or record by record); others count from
// the start and tell no one.
struct TextCountResume {
  const TextCountProgress* from = nullptr;                 // an earlier pass over the same input
  std::function<void(const TextCountProgress&)> progress;  // each 1/64 of the input, 256 MiB at most
  bool counted_on = false;                                 // set when the count went on from `from`
};

// Counts the records of the `bytes` bytes at `offset` of `file` (an input's
// spool may lie anywhere in the scratch file), and finds the longest (with
// blank records skipped, a record's span may include the blank records
// after it: a bound, which is all the walk needs) and their spread. Throws
// InputError naming `display_name` for an unterminated quoted CSV field.
// Cost: one sequential read; memchr speed for plain lines.
// With `digest`, every record counted is added to it (a last record that
// lacks its terminator with the terminator it will get). With `mapped`, the
// same `bytes` bytes are in memory there (io/mapped_bytes.hpp) and are
// counted where they lie, `file` untouched, so that a run in RAM reads its
// input once (docs/design.md). With `sink`, each record counted is handed
// to it as it is found (same cost: the bulk count finds every end anyway).
TextCount count_text_records(io::BlockFile& file, std::uint64_t offset, std::uint64_t bytes,
                             const formats::RecordSyntax& syntax, std::uint64_t header_records, bool skip_blank,
                             const std::string& display_name, RecordDigest* digest = nullptr,
                             const std::byte* mapped = nullptr, RecordSink* sink = nullptr,
                             TextCountResume* resume = nullptr);

}  // namespace extshuffle::dataset
