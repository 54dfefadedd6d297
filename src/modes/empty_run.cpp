#include "empty_run.hpp"

#include "extshuffle/formats/format_detection.hpp"

namespace extshuffle::modes {

bool outputs_nothing_of_input(const JobOptions& options, const JobDataset& dataset) {
  if (options.head_count != 0 || options.verify || options.dry_run || dataset.inputs.front().ends_with(".npy"))
    return false;
  if (options.header_lines >= 0) return options.header_lines == 0;
  formats::Format format = options.format;
  if (format == formats::Format::kAuto && options.record_size == 0)
    format = formats::format_by_extension(dataset.inputs.front());
  // A tar archive's output holds its trailer: an empty archive, not an empty file.
  return formats::default_header_records(format) == 0 && formats::framing_of(format) != formats::Framing::kTarSample;
}

}  // namespace extshuffle::modes
