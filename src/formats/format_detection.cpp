#include "extshuffle/formats/format_detection.hpp"

#include "extshuffle/errors.hpp"
#include "extshuffle/formats/npy_header.hpp"

namespace extshuffle::formats {

std::optional<Format> format_named(std::string_view word) {
  // In kFormatWords' order (a test holds the two together).
  static constexpr Format kInOrder[] = {Format::kAuto, Format::kBinary, Format::kLines,    Format::kCsv,
                                        Format::kTsv,  Format::kJsonl,  Format::kTfrecord, Format::kTar};
  std::string_view words = kFormatWords;
  for (const Format format : kInOrder) {
    const std::size_t comma = words.find(',');
    if (words.substr(0, comma) == word) return format;
    words = comma == std::string_view::npos ? std::string_view() : words.substr(comma + 1);
  }
  return std::nullopt;
}

Format format_by_extension(std::string_view path) {
  for (std::string_view compressed : {".gz", ".zst", ".zstd"}) {
    if (path.ends_with(compressed)) path.remove_suffix(compressed.size());
  }
  if (path.ends_with(".csv")) return Format::kCsv;
  if (path.ends_with(".tsv")) return Format::kTsv;
  if (path.ends_with(".jsonl") || path.ends_with(".ndjson")) return Format::kJsonl;
  if (path.ends_with(".tfrecord") || path.ends_with(".tfrecords")) return Format::kTfrecord;
  if (path.ends_with(".tar")) return Format::kTar;
  return Format::kAuto;
}

namespace {

// A text format named for bytes that are not text: a .npy array (a
// directory of mixed files read with --format jsonl) or NUL bytes in CSV,
// TSV or JSONL would be cut into lines of binary garbage. (--format lines
// with NUL bytes is the documented way to shuffle such bytes as lines.)
void check_text(Format format, bool zero_terminated, std::string_view head, const std::string& display_name) {
  if (framing_of(format) != Framing::kLines) return;  // binary frames by design
  if (starts_with_npy_magic(head)) {
    throw UsageError("input " + display_name + " is a .npy array, not text of the format named: leave --format " +
                     "out (auto) or read it apart");
  }
  const bool strict = format == Format::kCsv || format == Format::kTsv || format == Format::kJsonl;
  if (strict && !zero_terminated && head.find('\0') != std::string_view::npos) {
    throw UsageError("input " + display_name + " is binary (NUL bytes in its first 64 KiB), not CSV, TSV or JSONL " +
                     "text: give --record-size BYTES, or --format lines to shuffle it as lines");
  }
}

// A compression extshuffle does not read (it reads gzip and zstd): by its
// extension, or in auto mode by its magic, named with the pipe that reads it.
void check_compression(Format requested, std::size_t record_size, std::string_view path, std::string_view head,
                       const std::string& display_name) {
  struct Unsupported {
    std::string_view name, extension, magic, tool;
  };
  static constexpr Unsupported kUnsupported[] = {
      {"xz", ".xz", std::string_view("\xFD" "7zXZ\0", 6), "xz"},
      {"lzma", ".lzma", std::string_view(), "xz"},
      {"bzip2", ".bz2", std::string_view("BZh"), "bzip2"},
      {"lz4", ".lz4", std::string_view("\x04\x22\x4D\x18", 4), "lz4"},
  };
  if (record_size != 0) return;  // binary records: any bytes
  for (const Unsupported& u : kUnsupported) {
    const bool by_name = path.ends_with(u.extension);
    const bool by_magic = requested == Format::kAuto && !u.magic.empty() && head.starts_with(u.magic);
    if (!by_name && !by_magic) continue;
    std::string_view inner = path;
    if (by_name) inner.remove_suffix(u.extension.size());
    const Format format = requested != Format::kAuto ? requested : format_by_extension(inner);
    static constexpr const char* kNames[] = {"FORMAT", "binary", "lines", "csv", "tsv", "jsonl", "tfrecord", "tar"};
    const std::string named = kNames[static_cast<int>(format)];
    throw UsageError("input " + display_name + " is " + std::string(u.name) +
                     "-compressed, which is not read (gzip and zstd are): decompress it through a pipe, " +
                     std::string(u.tool) + " -dc " + display_name + " | extshuffle --format " + named +
                     " - -o OUT, or into a file first");
  }
}

}  // namespace

DetectedFormat detect_format(Format requested, std::size_t record_size, bool zero_terminated, std::string_view path,
                             std::string_view head, const std::string& display_name) {
  // 1. A framed format named by --format, by the extension (unless
  //    --record-size says the records are binary) or by -z.
  check_compression(requested, record_size, path, head, display_name);
  Format format = requested;
  if (format == Format::kAuto && record_size == 0) format = format_by_extension(path);
  if (zero_terminated && format == Format::kAuto) format = Format::kLines;
  if (format != Format::kAuto && format != Format::kBinary) {
    if (record_size != 0) throw UsageError("--record-size is for binary records, not text formats");
    if (format == Format::kTfrecord && zero_terminated) {
      throw UsageError("-z is for lines: TFRecord records are length-prefixed frames");
    }
    if (format == Format::kTar && zero_terminated) throw UsageError("-z is for lines: tar records are samples");
    check_text(format, zero_terminated, head, display_name);
    return {RecordKind::kFramed, format};
  }
  // 2. A .npy array, by its magic.
  if (starts_with_npy_magic(head)) return {RecordKind::kNpy, Format::kLines};
  // 3. Without --record-size: text lines, unless the bytes look binary.
  if (record_size == 0) {
    if (format == Format::kBinary) throw UsageError("--format binary needs --record-size BYTES");
    if (head.find('\0') != std::string_view::npos) {
      throw UsageError("input " + display_name +
                       " is binary (NUL bytes in its first 64 KiB): give --record-size BYTES, --format tfrecord for "
                       "TFRecord frames, or --format lines (or -z) to shuffle it as text");
    }
    return {RecordKind::kFramed, Format::kLines};
  }
  return {RecordKind::kFixed, Format::kLines};
}

Framing framing_of(Format format) {
  switch (format) {
    case Format::kTfrecord: return Framing::kTfrecord;
    case Format::kTar: return Framing::kTarSample;
    default: return Framing::kLines;
  }
}

RecordSyntax framed_syntax(Format format, bool zero_terminated) {
  RecordSyntax syntax;
  syntax.terminator = zero_terminated ? '\0' : '\n';
  syntax.quoted = format == Format::kCsv;
  syntax.framing = framing_of(format);
  return syntax;
}

std::uint64_t default_header_records(Format format) {
  return format == Format::kCsv || format == Format::kTsv ? 1 : 0;
}

std::uint64_t fixed_record_count(std::uint64_t bytes, std::size_t record_size, const std::string& display_name) {
  if (bytes % record_size != 0) {
    throw InputError("input " + display_name + ": its size, " + std::to_string(bytes) +
                     " bytes, is not a multiple of the record size " +
                     std::to_string(record_size) + " (remainder " + std::to_string(bytes % record_size) +
                     " bytes)");
  }
  return bytes / record_size;
}

}  // namespace extshuffle::formats
