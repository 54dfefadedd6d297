#include "dataset_input.hpp"

#include <algorithm>

#include "extshuffle/errors.hpp"
#include "extshuffle/formats/npy_header.hpp"
#include "tar_input.hpp"
#include "extshuffle/formats/npy_rows.hpp"
#include "extshuffle/io/input_set.hpp"
#include "extshuffle/dataset/verification.hpp"

namespace extshuffle::dataset {
namespace {

// The terminator a text input's last record lacks, as one byte in memory.
const std::byte kTerminators[2] = {std::byte{'\n'}, std::byte{'\0'}};

// A header for a message: printable, on one line, shortened.
std::string shown(const std::string& header) {
  std::string text;
  for (char c : header.substr(0, 60)) {
    text += c == '\n' ? std::string("\\n") : c == '\r' ? std::string("\\r") : c == '\0' ? std::string("\\0") : std::string(1, c);
  }
  return "'" + text + (header.size() > 60 ? "...'" : "'");
}

// The shape of one row, as Python writes a tuple: (), (3,), (3, 4).
std::string trailing_shape(const formats::NpyHeader& npy) {
  std::string text = "(";
  for (std::size_t k = 1; k < npy.shape.size(); ++k) text += (k > 1 ? ", " : "") + std::to_string(npy.shape[k]);
  return text + (npy.shape.size() == 2 ? ",)" : ")");
}

// Throws unless input `k` (`layout`) can join the dataset whose first input is `first`.
void check_agrees(const InputLayout& first, const std::string& first_path, const InputLayout& layout,
                  const std::string& path) {
  const std::string a = input_display_name(first_path), b = input_display_name(path);
  if (format_name(layout.format) != format_name(first.format)) {
    throw InputError("inputs differ in format: " + a + " is " + format_name(first.format) + ", " + b + " is " +
                     format_name(layout.format) + " (give --format to read them alike)");
  }
  if (layout.text && layout.header != first.header) {
    throw InputError("inputs differ in their header: " + a + " has " + shown(first.header) + ", " + b + " has " +
                     shown(layout.header));
  }
  if (layout.format.kind == formats::RecordKind::kNpy) {
    const formats::NpyHeader x = formats::parse_npy_header(first.header, a);
    const formats::NpyHeader y = formats::parse_npy_header(layout.header, b);
    if (x.descr != y.descr) {
      throw InputError("inputs differ in dtype: " + a + " holds '" + x.descr + "', " + b + " holds '" + y.descr + "'");
    }
    if (trailing_shape(x) != trailing_shape(y)) {
      throw InputError("inputs differ in the shape of a row: " + a + " has rows of shape " + trailing_shape(x) + ", " +
                       b + " of shape " + trailing_shape(y));
    }
  }
  if (!layout.text && layout.record_size != first.record_size) {
    throw InputError("inputs differ in record size: " + a + " has records of " + std::to_string(first.record_size) +
                     " bytes, " + b + " of " + std::to_string(layout.record_size));
  }
}

}  // namespace

DatasetInput read_dataset(const JobOptions& config, io::InputSet& inputs, InputMapping* mapping) {
  DatasetInput dataset;
  std::uint64_t records = 0, npy_rows = 0;
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    io::InputSource& source = inputs[k];
    InputLayout layout = read_input_layout(config, source, inputs.size() == 1 ? mapping : nullptr);
    if (k == 0) {
      dataset.layout = layout;
      dataset.layout.digest = RecordDigest();
    } else {
      check_agrees(dataset.layout, inputs[0].path(), layout, source.path());
      TextCount& count = dataset.layout.text_count;
      count.longest_record_bytes = std::max(count.longest_record_bytes, layout.text_count.longest_record_bytes);
      count.record_bytes_squared += layout.text_count.record_bytes_squared;
    }
    const std::uint64_t bytes = source.bytes();
    const std::uint64_t at = source.data_offset() + layout.data_offset;
    if (layout.tar) {
      append_tar_frames(dataset.data, source.data(), at, *layout.tar);
      dataset.tar_indexes.push_back(layout.tar);
      dataset.layout.digest.merge(layout.digest);
    } else if (layout.text) {
      dataset.data.append({&source.data(), at, bytes - layout.data_offset});
      const bool terminated = layout.text_count.add_terminator && layout.data_offset < bytes;
      if (terminated) dataset.data.append({nullptr, 0, 1, &kTerminators[layout.syntax.terminator == '\n' ? 0 : 1]});
      if (layout.loaded) {
        io::MappedBytes& mapped = *mapping->mapped;
        if (terminated) mapped.after() = kTerminators[layout.syntax.terminator == '\n' ? 0 : 1];
        dataset.loaded.append(
            {nullptr, 0, bytes - layout.data_offset + (terminated ? 1 : 0), mapped.data() + layout.data_offset});
      }
      dataset.layout.digest.merge(layout.digest);
    } else {
      dataset.data.append({&source.data(), at, layout.records * layout.record_size});
      if (config.verify) {
        dataset.layout.digest.merge(
            digest_fixed_records(source.data(), at, layout.records * layout.record_size, layout.record_size));
      }
    }
    records += layout.records;
    if (layout.format.kind == formats::RecordKind::kNpy) {
      npy_rows += formats::parse_npy_header(layout.header, input_display_name(source.path())).rows;
    }
    dataset.bytes += bytes;
    dataset.files.push_back({source.path(), source.stored_bytes(), layout.records});
  }
  dataset.layout.records = records;
  // The .npy header of the whole: the rows of every input (rows of zero
  // bytes count here, though there is nothing of them to move).
  if (dataset.layout.format.kind == formats::RecordKind::kNpy) {
    dataset.layout.header = formats::npy_header_with_rows(dataset.layout.header, npy_rows);
  }
  return dataset;
}

}  // namespace extshuffle::dataset
