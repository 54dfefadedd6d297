// How an input is cut into records, decided from the options and the input's
// first bytes (docs/conventions.md, Record formats). The format is never guessed silently: a .npy
// array is recognised by its magic, fixed-size records need --record-size,
// framed formats come from --format or the file's extension, and input that
// looks binary without --record-size is refused rather than cut into lines.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "extshuffle/formats/record_syntax.hpp"

namespace extshuffle::formats {

// --format. kAuto: a .npy array by its magic, --record-size for fixed-size
// records, else a framed format by the file's extension (.csv, .tsv, .jsonl, .ndjson,
// .tfrecord, .tfrecords, also under .gz/.zst), else lines. kTfrecord's
// frames are framed records like lines, of their own framing.
// kTar: WebDataset samples of a tar archive (.tar; formats/tar.hpp), also
// framed records, each sample in its frame.
enum class Format { kAuto, kBinary, kLines, kCsv, kTsv, kJsonl, kTfrecord, kTar };

// The words that name each Format (--format's, Python's format=), comma-
// separated in --help's order: the one list of them.
inline constexpr const char* kFormatWords = "auto,binary,lines,csv,tsv,jsonl,tfrecord,tar";

// The Format named `word` (one of kFormatWords'), or nullopt.
std::optional<Format> format_named(std::string_view word);

// The three kinds of record an input holds: fixed-size, the rows of a .npy
// array, or framed: variable-size records found by their framing (lines,
// TFRecord frames, tar samples: formats::Framing).
enum class RecordKind { kFixed, kNpy, kFramed };

// How records of `format` are framed: TFRecord frames, tar samples, or
// lines (every other format). The one place that says which framing a
// format has; framed_syntax() and the questions below ask it.
Framing framing_of(Format format);

struct DetectedFormat {
  RecordKind kind = RecordKind::kFixed;
  Format framed_format = Format::kLines;  // kFramed only: kLines, kCsv, kTsv, kJsonl, kTfrecord or kTar
  Framing framing() const { return framing_of(framed_format); }  // kFramed only
};

// How many bytes of the input's start detect_format() looks at for NUL bytes.
inline constexpr std::uint64_t kDetectionProbeBytes = 64 * 1024;

// The framed format a file name announces (under .gz, .zst, .zstd), or kAuto.
Format format_by_extension(std::string_view path);

// Decides the record layout. `requested`: --format; `record_size`:
// --record-size in bytes, 0 when not given; `zero_terminated`: -z; `path`:
// the input's name, whose extension may name a framed format; `head`: the
// input's first min(size, kDetectionProbeBytes) bytes; `display_name` names
// the input in messages. Throws UsageError for --record-size with a framed
// format, -z with TFRecord or tar, --format binary without --record-size,
// and binary content (a NUL byte in `head`) without --record-size or a
// framed format. Cost: one scan of `head`.
DetectedFormat detect_format(Format requested, std::size_t record_size, bool zero_terminated, std::string_view path,
                             std::string_view head, const std::string& display_name);

// Where framed records of `format` end: -z's NUL or a newline, with RFC 4180
// quoting for CSV; TFRecord records and tar samples are frames.
RecordSyntax framed_syntax(Format format, bool zero_terminated);

// The header records kept on top when --header is not given: 1 for CSV and
// TSV, 0 otherwise.
std::uint64_t default_header_records(Format format);

// The number of `record_size`-byte records in `bytes` bytes. Throws
// InputError naming the input `display_name`, the size, the record size and
// the remainder when `bytes` is not a multiple of `record_size` (> 0).
std::uint64_t fixed_record_count(std::uint64_t bytes, std::size_t record_size, const std::string& display_name);

}  // namespace extshuffle::formats
