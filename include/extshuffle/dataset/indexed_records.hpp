// The records of a dataset's input files read by their number, through
// each file's record index (dataset/record_index.hpp): what Python's
// extshuffle.Dataset reads with (docs/python.md "Reading records in the
// order"). Record i is the i-th record the CLI counts in the files taken in
// order, so with p = P(seed, N), records p[0], p[1], ... are the CLI's output
// for that seed.
//
// A batch is read in two steps, so that the caller can allocate the
// buffers the records go to (Python's bytes) first: plan() says how many
// bytes each record takes, read() fills them, its reads sorted by file and
// offset and neighbours joined into one preadv. What is read is checked
// against the index: a line must end with its terminator, a TFRecord frame
// carry its length and CRCs, a tar member follow a valid header, and no
// record may lie past its file's end; a file whose size or modification time
// is not the index's is not read at all. So an input that changed gives one
// line (InputError), never a wrong record.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "extshuffle/dataset/mapped_index.hpp"
#include "extshuffle/dataset/record_index.hpp"

namespace extshuffle::dataset {

class InputDescriptors;

// One input file: its path and its index, or for fixed-size records and
// .npy rows, which need no arrays, the same facts from its header
// (index_for_fixed_records()).
struct IndexedInput {
  std::string path;
  std::shared_ptr<const MappedIndex> index;  // null: `layout` alone
  IndexHeader layout;                        // the index's header when there is one
  std::string header;                        // the file's bytes before its records (CSV header lines, .npy header)
};

// How a record is handed out. kRecord: lines, CSV, TSV and JSONL records
// without their terminator, a TFRecord frame's data, each member's data of
// a tar sample, a row's bytes. kRaw: the bytes the CLI writes for the
// record (a line with its terminator, one added where the input's last line
// lacks it; a whole TFRecord frame; a sample's bytes, headers included).
enum class RecordForm { kRecord, kRaw };

// The reads of a batch of records (IndexedRecords::plan()).
struct ReadPlan {
  // Record r of the batch is segments first_segment[r] ..
  // first_segment[r + 1] - 1: one, except a tar sample's members (kRecord),
  // one segment each, named in segment_names (views into the index).
  std::vector<std::size_t> first_segment;
  std::vector<std::uint64_t> segment_bytes;
  std::vector<std::string_view> segment_names;  // tar samples (kRecord) only

  // What read() does: bytes of a file into a segment, or into scratch
  // space for the checks.
  struct Read {
    std::uint32_t input = 0;
    std::uint64_t offset = 0, bytes = 0;
    std::int64_t segment = -1;  // -1: scratch
    std::uint64_t at = 0;       // in the segment, or in the scratch space
  };
  enum class CheckKind : unsigned char { kTerminator, kRawTerminator, kAddTerminator, kFrame, kRawFrame, kTarHeader };
  struct Check {
    CheckKind kind;
    std::uint32_t input = 0;
    std::uint64_t record = 0;  // in its file
    std::uint64_t offset = 0;  // of the record in its file
    std::int64_t segment = -1;
    std::uint64_t at = 0;  // in the scratch space
  };
  std::vector<Read> reads;
  std::vector<Check> checks;
  std::uint64_t scratch_bytes = 0;
};

class IndexedRecords {
 public:
  // Takes the inputs in order; their indexes must have been checked
  // against them (check_index_matches()). Opens nothing yet: each file is
  // opened at its first read, and at most a few hundred at once.
  explicit IndexedRecords(std::vector<IndexedInput> inputs);
  ~IndexedRecords();
  IndexedRecords(const IndexedRecords&) = delete;
  IndexedRecords& operator=(const IndexedRecords&) = delete;

  // N: the records of every input.
  std::uint64_t size() const { return first_record_.back(); }
  const std::vector<IndexedInput>& inputs() const { return inputs_; }

  // Plans the reads of records `indices` (each below size(), any order,
  // repeats allowed). Throws std::out_of_range naming the first index past
  // the end, InputError for an index whose entries lie outside its file.
  // Cost: a binary search over the inputs and a few lookups per record.
  ReadPlan plan(std::span<const std::uint64_t> indices, RecordForm form) const;

  // Reads the records of `plan` into `targets`, one buffer of
  // plan.segment_bytes[s] bytes per segment, and checks them (see the top).
  // Thread-safe; the caller may hold no lock (Python's GIL is released).
  // Throws InputError naming the input and the record, IoError.
  void read(const ReadPlan& plan, std::span<std::byte* const> targets) const;

 private:
  void plan_record(std::uint32_t input, std::uint64_t record, RecordForm form, ReadPlan& plan) const;

  std::vector<IndexedInput> inputs_;
  std::vector<std::uint64_t> first_record_;  // inputs + 1
  std::unique_ptr<InputDescriptors> descriptors_;
};

}  // namespace extshuffle::dataset
