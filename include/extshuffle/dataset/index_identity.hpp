// Whether a record index (dataset/record_index.hpp) is the index of an
// input as the caller reads it: the same file (size, modification time,
// fingerprint of sampled blocks) read the same way (the format detected as
// the CLI detects it, the header, --skip-empty, -z, --ignore-zeros, the
// record size). An index of another file, of the file before it changed, or
// made with other options is refused with one line, never used.
#pragma once

#include <string>

#include "extshuffle/dataset/dataset_options.hpp"
#include "extshuffle/dataset/record_index.hpp"
#include "extshuffle/formats/format_detection.hpp"

namespace extshuffle::dataset {

// Refuses (UsageError, one line saying what to do) an input whose records
// cannot be read at an offset: a stream (standard input, a pipe, a FIFO, a
// device) or a compressed file (.gz, .zst, .zstd, .xz, .bz2, .lz4 by its
// name, as the CLI decides what it decompresses). `role` says what asks:
// "--index-only", "Dataset". Cost: one stat.
void check_indexable(const std::string& path, const std::string& role);

// How `path` is read with `options`, as an index of it records it: its
// format detected as the CLI detects it (its first 64 KiB read), the header
// records in effect, the record size of fixed-size records or .npy rows.
// Throws what the CLI throws for it (UsageError: binary input without
// --record-size, -z with TFRecord, --header with tar...; InputError: a
// malformed .npy header), IoError. With `format`, the format detected.
IndexReading expected_reading(const DatasetOptions& options, const std::string& path,
                              formats::DetectedFormat* format = nullptr);

// The reading an index records for records of `format` read with
// `options` (`record_size`: of a fixed-size record or .npy row): only what
// changes them (-z for lines, --ignore-zeros for tar archives, ...).
IndexReading index_reading(const DatasetOptions& options, const formats::DetectedFormat& format,
                           std::uint64_t record_size);

// `path`'s size, modification time (ns) and fingerprint, as an index
// records them (io::fingerprint_file: ten blocks read; without
// `fingerprint`, left empty and nothing read). Throws IoError.
IndexedFile indexed_file_facts(const std::string& path, bool fingerprint = true);

// Throws InputError, one line naming `index_path` and `input_path`, unless
// `index` describes the file whose facts are `facts`, read as `reading`.
void check_index_matches(const IndexHeader& index, const std::string& index_path, const std::string& input_path,
                         const IndexedFile& facts, const IndexReading& reading);

// The first min(its size, `bytes`) bytes of the file `path` (a header).
// Throws IoError.
std::string read_file_head(const std::string& path, std::uint64_t bytes);

// What an index of fixed-size records or .npy rows says (they need no
// arrays: record k lies at data_offset + k x record_size), computed from
// `path`'s size and header; `reading` from expected_reading(). Throws
// InputError for a size that is not a whole number of records, IoError.
IndexHeader fixed_records_layout(const std::string& path, const IndexReading& reading);

}  // namespace extshuffle::dataset
