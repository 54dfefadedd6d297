#include "generated_run.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#include "extshuffle/driver/external_executor.hpp"
#include "extshuffle/io/block_file.hpp"
#include "extshuffle/io/compression.hpp"
#include "extshuffle/io/input_source.hpp"
#include "extshuffle/io/output_file.hpp"

namespace extshuffle::driver {

RunStats run_generated(const Config& config) {
  const std::uint64_t n = config.echo ? config.echo_items.size() : config.range_high + 1 - config.range_low;
  core::check_plan(n, config.constants);
  io::OutputFile output(config.output_path);
  io::CompressingWriter writer(io::codec_for_path(config.output_path),
                               [&output](const void* data, std::size_t n) { output.write(data, n); },
                               config.threads);
  // 1. The indices, as 8-byte records in scratch space.
  auto scratch = io::BlockFile::create_scratch(io::scratch_directory(config.tmpdir));
  std::vector<std::uint64_t> indices(std::min<std::uint64_t>(n, std::uint64_t{1} << 20));
  for (std::uint64_t first = 0; first < n; first += indices.size()) {
    const std::uint64_t count = std::min<std::uint64_t>(indices.size(), n - first);
    for (std::uint64_t k = 0; k < count; ++k) indices[k] = first + k;
    scratch->write_now(indices.data(), first * 8, count * 8);
  }
  // 2. Their shuffle; each index comes out as the item it names.
  ExternalOptions options{{8, config.seed, config.constants, config.device, config.threads}, config.memory_bytes};
  options.output_records = config.head_count;
  std::string text;
  const ExternalStats e = shuffle_external(
      *scratch, 0, n, *scratch, n * 8, options, [&](const std::byte* data, std::size_t bytes) {
        text.clear();
        for (std::size_t at = 0; at < bytes; at += 8) {
          std::uint64_t index = 0;
          std::memcpy(&index, data + at, 8);
          if (config.echo) {
            text += config.echo_items[index];
          } else {
            text += std::to_string(config.range_low + index);
          }
          text += '\n';
        }
        writer.write(text.data(), text.size());
      });
  writer.finish();
  output.commit();
  RunStats stats;
  stats.records = n;
  stats.bytes = n * 8;
  stats.levels = core::plan_levels(n, config.constants);
  stats.passes = e.passes;
  stats.bytes_read = e.bytes_read;
  stats.bytes_written = e.bytes_written + n * 8;
  return stats;
}

}  // namespace extshuffle::driver
