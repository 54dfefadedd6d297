#include "extshuffle/dataset/input_layout.hpp"

#include "extshuffle/errors.hpp"
#include "extshuffle/formats/format_detection.hpp"
#include "extshuffle/formats/npy_layout.hpp"
#include "extshuffle/io/input_source.hpp"
#include "tar_input.hpp"

namespace extshuffle::dataset {
namespace {

InputLayout text_layout(const DatasetOptions& options, formats::Format format, io::InputSource& source,
                        const std::string& name, InputMapping* mapping, RecordSink* sink, const TextCount* known,
                        TextCountResume* resume) {
  check_frame_options(options, format);
  InputLayout layout;
  layout.syntax = formats::framed_syntax(format, options.zero_terminated);
  const std::uint64_t header_lines = header_records(options, format);
  const std::uint64_t bytes = source.bytes();
  if (mapping != nullptr && ioperm::maps_input(bytes, mapping->budget_bytes)) {
    mapping->mapped = io::MappedBytes::map(source.data(), source.data_offset(), bytes, name);
  }
  layout.mapped = mapping != nullptr && mapping->mapped.has_value();
  if (known != nullptr && !options.verify && sink == nullptr) {
    layout.text_count = *known;
    layout.count_known = true;
  } else {
    if (layout.mapped) mapping->mapped->expect_sequential(true);
    layout.text_count = count_text_records(source.data(), source.data_offset(), bytes, layout.syntax, header_lines,
                                           options.skip_empty, name, options.verify ? &layout.digest : nullptr,
                                           layout.mapped ? mapping->mapped->data() : nullptr, sink,
                                           source.spooled() ? nullptr : resume);
    if (layout.mapped) mapping->mapped->expect_sequential(false);
  }
  layout.records = layout.text_count.records;
  layout.data_offset = layout.text_count.header_bytes;
  layout.header = source.read_head(layout.data_offset);
  // A file of only a header whose last line lacks its terminator gets one.
  if (layout.data_offset == bytes && layout.text_count.add_terminator) layout.header += layout.syntax.terminator;
  return layout;
}

// Fixed-size records that may fit in RAM, in a file of their own (not the
// spool of a pipe or of a compressed input, already a copy), are mapped:
// a run in RAM then reads them where they lie, without a copy of its own.
void map_fixed_records(io::InputSource& source, InputLayout& layout, const std::string& name,
                       InputMapping* mapping) {
  const std::uint64_t bytes = layout.records * layout.record_size;
  if (mapping == nullptr || source.spooled() || bytes == 0 ||
      !ioperm::maps_input(source.bytes(), mapping->budget_bytes)) {
    return;
  }
  mapping->mapped = io::MappedBytes::map(source.data(), source.data_offset() + layout.data_offset, bytes, name);
  layout.mapped = mapping->mapped.has_value();
}

}  // namespace

void check_frame_options(const DatasetOptions& options, formats::Format format) {
  if (format != formats::Format::kTfrecord && format != formats::Format::kTar) return;
  if (options.header_lines > 0 || options.skip_empty) {
    throw UsageError(std::string(options.skip_empty ? "--skip-empty" : "--header") +
                     " is for text: " + (format == formats::Format::kTar ? "tar archives" : "TFRecord files") +
                     " have no header lines and no blank records");
  }
}

std::uint64_t header_records(const DatasetOptions& options, formats::Format format) {
  return options.header_lines >= 0 ? static_cast<std::uint64_t>(options.header_lines)
                                   : formats::default_header_records(format);
}

std::string input_display_name(const std::string& path) { return path == "-" ? "standard input" : "'" + path + "'"; }

std::string format_name(const formats::DetectedFormat& format) {
  switch (format.kind) {
    case formats::RecordKind::kNpy: return "npy";
    case formats::RecordKind::kFixed: return "binary";
    case formats::RecordKind::kFramed: break;
  }
  switch (format.framed_format) {
    case formats::Format::kCsv: return "csv";
    case formats::Format::kTsv: return "tsv";
    case formats::Format::kJsonl: return "jsonl";
    case formats::Format::kTfrecord: return "tfrecord";
    case formats::Format::kTar: return "tar";
    default: return "lines";
  }
}

InputLayout read_input_layout(const DatasetOptions& options, io::InputSource& source, InputMapping* mapping,
                              RecordSink* sink, const TextCount* known, TextCountResume* resume) {
  const std::string name = input_display_name(source.path());
  std::string head = source.read_head(formats::kDetectionProbeBytes);
  const formats::DetectedFormat detected =
      formats::detect_format(options.format, options.record_size, options.zero_terminated, source.path(), head, name);
  InputLayout layout;
  layout.format = detected;
  switch (detected.kind) {
    case formats::RecordKind::kFramed:
      if (detected.framing() == formats::Framing::kTarSample) {
        layout = tar_layout(options, source, name, sink);
        layout.format = detected;
        return layout;
      }
      layout = text_layout(options, detected.framed_format, source, name, mapping, sink, known, resume);
      layout.format = detected;
      return layout;
    case formats::RecordKind::kNpy: {
      const std::uint64_t wanted = formats::npy_head_bytes(head, source.bytes());
      if (wanted > head.size()) head = source.read_head(wanted);
      const formats::NpyLayout npy = formats::npy_layout(head, source.bytes(), options.record_size, name);
      layout.data_offset = npy.data_offset;
      layout.record_size = npy.record_size;
      layout.records = npy.records;
      layout.header = npy.header;
      map_fixed_records(source, layout, name, mapping);
      return layout;
    }
    case formats::RecordKind::kFixed:
      break;
  }
  layout.record_size = options.record_size;
  layout.records = formats::fixed_record_count(source.bytes(), options.record_size, name);
  map_fixed_records(source, layout, name, mapping);
  return layout;
}

}  // namespace extshuffle::dataset
