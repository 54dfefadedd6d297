#include "dataset_input.hpp"

#include <algorithm>

#include "extshuffle/dataset/format_agreement.hpp"
#include "extshuffle/dataset/tar_dataset_checks.hpp"
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

}  // namespace

DatasetInput read_dataset(const DatasetOptions& options, io::InputSet& inputs, InputMapping* mapping,
                          TextCounts* counts) {
  DatasetInput dataset;
  std::uint64_t records = 0, npy_rows = 0;
  bool spooled = true;
  std::vector<TarArchiveFacts> archives;
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    io::InputSource& source = inputs[k];
    const bool known = counts != nullptr && k < counts->known.size();
    TextCountResume resume;
    if (counts != nullptr && !known) {
      if (counts->partial && k == counts->known.size()) resume.from = &*counts->partial;
      if (counts->on_progress) resume.progress = [counts, k](const TextCountProgress& p) { counts->on_progress(k, p); };
    }
    InputLayout layout = read_input_layout(options, source, inputs.size() == 1 ? mapping : nullptr, nullptr,
                                           known ? &counts->known[k] : nullptr, &resume);
    if (resume.counted_on) counts->counted_on = true;
    // Text read to count its records (not taken from `known`; counted on
    // from a killed run's progress: only the bytes after it).
    const bool counted = layout.framed() && !layout.count_known;
    if (counted) dataset.counted_bytes += source.bytes() - (resume.counted_on ? resume.from->through : 0);
    if (counts != nullptr) {
      counts->found.push_back(layout.text_count);
      if (counts->on_found && counted && k + 1 < inputs.size()) counts->on_found(counts->found);
    }
    if (k == 0) {
      dataset.layout = layout;
      dataset.layout.digest = RecordDigest();
    } else {
      check_inputs_agree(dataset.layout, inputs[0].path(), layout, source.path());
      dataset.layout.count_known = dataset.layout.count_known && layout.count_known;
      TextCount& count = dataset.layout.text_count;
      count.longest_record_bytes = std::max(count.longest_record_bytes, layout.text_count.longest_record_bytes);
      count.record_bytes_squared += layout.text_count.record_bytes_squared;
    }
    const std::uint64_t bytes = source.bytes();
    const std::uint64_t at = source.data_offset() + layout.data_offset;
    if (layout.syntax.framing == formats::Framing::kTarSample) {
      append_tar_frames(dataset.data, source.data(), at, *layout.tar_index);
      dataset.tar_indexes.push_back(layout.tar_index);
      const formats::TarIndex& index = *layout.tar_index;
      archives.push_back({source.path(), index.samples(), index.hard_links, index.first_key, index.last_key});
      dataset.layout.digest.merge(layout.digest);
    } else if (layout.framed()) {
      dataset.data.append({&source.data(), at, bytes - layout.data_offset});
      const bool terminated = layout.text_count.add_terminator && layout.data_offset < bytes;
      if (terminated) dataset.data.append({nullptr, 0, 1, &kTerminators[layout.syntax.terminator == '\n' ? 0 : 1]});
      if (layout.mapped) {
        io::MappedBytes& mapped = *mapping->mapped;
        if (terminated) mapped.after() = kTerminators[layout.syntax.terminator == '\n' ? 0 : 1];
        dataset.mapped.append(
            {nullptr, 0, bytes - layout.data_offset + (terminated ? 1 : 0), mapped.data() + layout.data_offset});
      }
      dataset.layout.digest.merge(layout.digest);
    } else {
      dataset.data.append({&source.data(), at, layout.records * layout.record_size});
      if (layout.mapped) dataset.mapped.append({nullptr, 0, mapping->mapped->bytes(), mapping->mapped->data()});
      if (options.verify) {
        dataset.layout.digest.merge(
            digest_fixed_records(source.data(), at, layout.records * layout.record_size, layout.record_size));
      }
    }
    records += layout.records;
    if (layout.format.kind == formats::RecordKind::kNpy) {
      npy_rows += formats::parse_npy_header(layout.header, input_display_name(source.path())).rows;
    }
    dataset.bytes += bytes;
    spooled = spooled && source.spooled();
    dataset.files.push_back({source.path(), source.stored_bytes(), layout.records});
  }
  dataset.tar_warnings = tar_dataset_warnings(archives, options.verify);
  dataset.layout.records = records;
  dataset.layout.spooled = spooled && inputs.size() > 0;
  // The .npy header of the whole: the rows of every input (rows of zero
  // bytes count here, though there is nothing of them to move).
  if (dataset.layout.format.kind == formats::RecordKind::kNpy) {
    dataset.layout.header = formats::npy_header_with_rows(dataset.layout.header, npy_rows);
  }
  return dataset;
}

}  // namespace extshuffle::dataset
