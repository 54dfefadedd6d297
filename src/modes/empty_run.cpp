#include "empty_run.hpp"

#include "extshuffle/formats/format_detection.hpp"

namespace extshuffle::modes {

bool outputs_nothing_of_input(const ModeSlices& options, const std::string& input) {
  if (options.output.head_count != 0 || options.input.verify || options.run.dry_run || input.ends_with(".npy"))
    return false;
  if (options.input.header_lines >= 0) return options.input.header_lines == 0;
  formats::Format format = options.input.format;
  if (format == formats::Format::kAuto && options.input.record_size == 0) format = formats::format_by_extension(input);
  // A tar archive's output holds its trailer: an empty archive, not an empty file.
  return formats::default_header_records(format) == 0 && formats::framing_of(format) != formats::Framing::kTarSample;
}

}  // namespace extshuffle::modes
