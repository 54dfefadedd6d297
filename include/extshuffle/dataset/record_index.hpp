// A record index (docs/cli.md "Record indexes", the format; docs/design.md
// "Record indexes"): where each record of one input file lies, as the
// counting pass finds it (the CLI's own framing, header and --skip-empty
// rules), so that record k can be read by its number without reading the
// records before it (Python's extshuffle.Dataset). One file:
//
//   64 bytes   "extshuffle record index\n", zero-padded
//   arrays     little-endian, each at a multiple of 64 bytes
//   header     one JSON object: the input it describes (size, modification
//              time, fingerprint of sampled blocks), how its records were
//              read, the record count, and each array's offset, dtype, shape
//   16 bytes   the header's offset (uint64, little-endian), then "XSINDEX1"
//
// Readable with numpy and json alone. Written once, front to back (the
// arrays of lines stream out as the records are found), and read mapped.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace extshuffle::dataset {

inline constexpr int kRecordIndexVersion = 1;
inline constexpr std::size_t kIndexAlignment = 64;  // the preamble's size, and where each array starts
inline constexpr std::string_view kIndexPreamble = "extshuffle record index\n";
inline constexpr std::string_view kIndexMagic = "XSINDEX1";  // the file's last 8 bytes
inline constexpr std::size_t kIndexFooterBytes = 16;         // the header's offset, then the magic
// The seed of the blocks an index's fingerprint of its input samples
// (io/file_fingerprint.hpp): fixed, so that any index of a file, whoever
// wrote it, records the same fingerprint for the same bytes.
inline constexpr std::uint64_t kIndexFingerprintSeed = 0x7265636f72647331;  // "records1"

// The index of `path` beside it: ".NAME.extshuffle-index" in its directory,
// hidden, so that a directory read as a dataset never takes it for one of
// its inputs (docs/cli.md "Datasets"). Pure.
std::string index_path_beside(const std::string& path);

// What an index records of its input, to recognise it later: a file of
// another size, modification time or fingerprint is not the file indexed.
struct IndexedFile {
  std::uint64_t bytes = 0;
  std::int64_t mtime_ns = 0;
  std::string fingerprint;  // io::fingerprint_file's with kIndexFingerprintSeed, as "<size>:<32 hex digits>"
  bool operator==(const IndexedFile&) const = default;
};

// How the records were found: everything that changes which bytes are a
// record. `format` is the format detected (format_name(): lines, csv, tsv,
// jsonl, tfrecord, tar, npy, binary), `header_records` the header records
// in effect (--header, else the format's default).
struct IndexReading {
  std::string format;
  std::uint64_t header_records = 0;
  bool skip_empty = false;
  bool zero_terminated = false;
  bool ignore_zeros = false;
  std::uint64_t record_size = 0;  // bytes of a fixed-size record or .npy row; 0: framed records
  bool operator==(const IndexReading&) const = default;
};

// One array of the index file.
struct IndexArray {
  std::string dtype;                 // numpy's: "<u8" (uint64) or "|u1" (bytes)
  std::vector<std::uint64_t> shape;  // numpy's, C order
  std::uint64_t offset = 0;          // of its first byte in the index file
  std::uint64_t bytes = 0;
};

// The arrays, by format (k a record, N the records):
//   lines, csv, tsv, jsonl, tfrecord  "offsets" uint64 (N + 1): record k is
//       [offsets[k], offsets[k + 1]), its terminator (or frame) included;
//   the same with skip_empty          "spans" uint64 (N, 2): record k is
//       [spans[k][0], spans[k][1]) (blank records lie between);
//   tar                               "ranges" uint64 (R, 2) (offset, bytes)
//       and "range_first" (N + 1): sample k is its ranges range_first[k] ..
//       range_first[k + 1] - 1 laid end to end (one, unless a skipped member
//       lies inside it); "members" uint64 (M, 3) (data offset, data bytes,
//       end of its name in "names") and "member_first" (N + 1): member m's
//       name is names[members[m - 1][2] : members[m][2]] (from 0 for the
//       first), "names" the members' names, bytes end to end;
//   npy, binary                       none: record k is record_size bytes at
//       data_offset + k x record_size.
struct IndexHeader {
  IndexedFile input;
  IndexReading reading;
  std::uint64_t records = 0;
  std::uint64_t data_offset = 0;  // where the first record (or blank line) may start: after the header
  bool add_terminator = false;    // lines: the input's last record lacks its terminator
  std::map<std::string, IndexArray> arrays;
};

// The header as the index file holds it: one line of JSON (UTF-8).
std::string index_header_json(const IndexHeader& header);

// Parses a header written by index_header_json(). Throws InputError naming
// `index_name` ("index 'x': ...") for anything else: malformed JSON, another
// index version, a missing or mistyped field.
IndexHeader parse_index_header(std::string_view json, const std::string& index_name);

}  // namespace extshuffle::dataset
