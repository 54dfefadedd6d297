// Where an input's records are and how large (docs/conventions.md, Record formats): fixed-size
// records from offset 0, the rows of a .npy array after its header, or framed
// records (lines, CSV, TFRecord frames, tar samples) after the header lines;
// the output repeats the header.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "extshuffle/dataset/dataset_options.hpp"
#include "extshuffle/dataset/record_digest.hpp"
#include "extshuffle/dataset/text_input.hpp"
#include "extshuffle/formats/format_detection.hpp"
#include "extshuffle/formats/record_syntax.hpp"
#include "extshuffle/formats/tar.hpp"
#include "extshuffle/io/mapped_bytes.hpp"
#include "extshuffle/ioperm/shuffle_options.hpp"
#include "extshuffle/ioperm/text_shuffle.hpp"

namespace extshuffle::io {
class InputSource;
}

namespace extshuffle::dataset {

struct InputLayout {
  formats::DetectedFormat format;  // how its records lie
  std::uint64_t data_offset = 0;
  std::size_t record_size = 0;  // 0 for framed records
  std::uint64_t records = 0;
  std::string header;  // written to the output before the shuffled records
  formats::RecordSyntax syntax;  // framed records: how they are delimited (syntax.framing)
  TextCount text_count;
  RecordDigest digest;  // of the text records read, with --verify
  // The input's records were mapped where read_input_layout was told (text:
  // and counted there).
  bool mapped = false;
  // Text: its count was the caller's (read_input_layout's `known`), so the
  // input was not read to count it.
  bool count_known = false;
  // Every input is read from its spool in scratch space (standard input, a
  // pipe, a compressed file): a record count that differs when it is read
  // again is damaged scratch, not a changed input.
  bool spooled = false;
  std::shared_ptr<const formats::TarIndex> tar_index;  // tar: where its samples lie (tar_input.hpp)

  // Records found by their framing (lines, TFRecord frames, tar samples),
  // not of record_size bytes.
  bool framed() const { return format.kind == formats::RecordKind::kFramed; }
};

// What the walk is told to shuffle a layout's records under the run's
// options (ioperm/shuffle_options.hpp): fixed-size records, or framed ones
// read as `input` says (--skip-empty).
inline ioperm::WalkOptions walk_options(const ioperm::RunOptions& run, const InputLayout& layout) {
  return ioperm::walk_options(run, layout.record_size);
}
inline ioperm::TextOptions text_options(const ioperm::RunOptions& run, const DatasetOptions& input,
                                        const InputLayout& layout) {
  return ioperm::TextOptions{walk_options(run, layout), layout.syntax, input.skip_empty, layout.spooled};
}

// One text input that may fit in RAM is mapped (io/mapped_bytes.hpp) and
// its records counted where they lie, so that a run in RAM reads it once and
// holds it once, in the page cache's pages. Mapped only when the input turns
// out to be text that may fit (maps_input); the run's arena then
// holds only the workspace of its records (layouts/shuffle_entry.cpp).
// One fixed-size input (a file of its own, not a spool) that may fit is
// mapped too, so that a run in RAM reads its records where they lie rather
// than through read() into fresh pages (layouts/fixed_records.cpp).
struct InputMapping {
  std::uint64_t budget_bytes = 0;          // the run's --memory
  std::optional<io::MappedBytes> mapped;  // the input's bytes, once mapped
};

// Detects the format of `source` (formats/format_detection.hpp; its own
// path's extension counts) and lays out its records: fixed-size and .npy
// records without reading more than the header; text records by the
// counting pass (one sequential read, which also digests them with
// options.verify). With `mapping`, an input that may fit in RAM is mapped
// there (layout.mapped; text is counted where it lies), so that a run in
// RAM reads it where it lies. With `sink`, the counting pass hands it every
// framed record (a tar archive: every member) it finds, for an index of
// them (dataset/record_index_writer.hpp). With `known`, text is not counted:
// `known` is its count, which the caller vouches for (--checkpoint: the
// count of an earlier run of the same input, by its identity); not taken
// with options.verify (the digest is of the records read) or `sink`.
// Otherwise, with `resume`, text counts on from its progress and tells its
// own (count_text_records; a spooled input, a copy, counts from the start).
// Throws UsageError, InputError, IoError.
InputLayout read_input_layout(const DatasetOptions& options, io::InputSource& source, InputMapping* mapping = nullptr,
                              RecordSink* sink = nullptr, const TextCount* known = nullptr,
                              TextCountResume* resume = nullptr);

// Refuses (UsageError) --header N > 0 and --skip-empty for TFRecord frames
// and tar samples, which have neither header lines nor blank records.
void check_frame_options(const DatasetOptions& options, formats::Format format);

// The header records of a text input in `format`: --header N, else the
// format's default (CSV and TSV 1, the others 0). Both tools.
std::uint64_t header_records(const DatasetOptions& options, formats::Format format);

// How messages name an input: "standard input" for "-", else 'path'.
std::string input_display_name(const std::string& path);

// The format's name, as the manifest records it: "lines", "csv", "tsv",
// "jsonl", "tfrecord", "tar", "npy" or "binary".
std::string format_name(const formats::DetectedFormat& format);

}  // namespace extshuffle::dataset
