#include "empty_run.hpp"

#include "extshuffle/formats/format_detection.hpp"
#include "extshuffle/io/compression.hpp"
#include "extshuffle/io/output_file.hpp"

namespace extshuffle::modes {

bool outputs_nothing_of_input(const JobOptions& config, const JobDataset& dataset) {
  if (config.head_count != 0 || config.verify || config.dry_run || dataset.inputs.front().ends_with(".npy")) return false;
  if (config.header_lines >= 0) return config.header_lines == 0;
  formats::Format format = config.format;
  if (format == formats::Format::kAuto && config.record_size == 0) format = formats::format_by_extension(dataset.inputs.front());
  // A tar archive's output holds its trailer: an empty archive, not an empty file.
  return formats::default_header_records(format) == 0 && format != formats::Format::kTar;
}

RunStats run_empty(const JobOptions& config, const JobDataset& dataset) {
  io::OutputFile output(dataset.output);
  io::CompressingWriter writer(io::codec_for_path(dataset.output),
                               [&output](const void* data, std::size_t n) { output.write(data, n); }, config.threads);
  writer.finish();
  output.commit();
  return RunStats{};
}

}  // namespace extshuffle::modes
