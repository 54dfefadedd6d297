#include "extshuffle/driver/run.hpp"

#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <vector>

#include "extshuffle/driver/errors.hpp"
#include "extshuffle/driver/external_executor.hpp"
#include "extshuffle/io/block_file.hpp"
#include "extshuffle/io/output_file.hpp"
#include "progress_meter.hpp"

namespace extshuffle::driver {
namespace {

std::uint64_t peak_rss_bytes() {
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<std::uint64_t>(usage.ru_maxrss) * 1024;
}

std::string scratch_directory(const Config& config) {
  if (!config.tmpdir.empty()) return config.tmpdir;
  const char* env = std::getenv("TMPDIR");
  return env && *env ? env : "/tmp";
}

// Copies standard input into the scratch file so that it can be read at
// random offsets; returns its size in bytes.
std::uint64_t spool_stdin(io::BlockFile& scratch) {
  constexpr std::size_t kPiece = std::size_t{4} << 20;
  std::vector<std::byte> buffer(kPiece);
  std::uint64_t size = 0;
  for (;;) {
    std::size_t fill = 0;
    while (fill < kPiece) {
      const ssize_t n = ::read(0, buffer.data() + fill, kPiece - fill);
      if (n == 0) break;
      if (n < 0) {
        if (errno == EINTR) continue;
        throw IoError("cannot read input", "standard input", errno);
      }
      fill += static_cast<std::size_t>(n);
    }
    if (fill == 0) break;
    scratch.write_now(buffer.data(), size, fill);
    size += fill;
    if (fill < kPiece) break;
  }
  return size;
}

void check_record_multiple(std::uint64_t bytes, std::size_t record_size) {
  if (bytes % record_size != 0) {
    throw InputError("input size " + std::to_string(bytes) + " bytes is not a multiple of the record size " +
                     std::to_string(record_size) + " (remainder " + std::to_string(bytes % record_size) +
                     " bytes)");
  }
}

std::string describe_schedule(std::uint64_t records, const Config& config, const Schedule& s) {
  const bool shipped = config.constants.leaf_records == core::kPlanV1.leaf_records &&
                       config.constants.max_fanout == core::kPlanV1.max_fanout;
  const std::string version =
      shipped ? "permutation version " + std::to_string(core::kPermutationVersion) : "testing constants";
  char text[1024];
  std::snprintf(text, sizeof text,
                "plan: %llu records of %zu bytes, %s (L = %llu, F = %llu), %u level%s\n"
                "schedule: memory %llu bytes, %u pass%s through disk, %llu node%s streamed through scratch "
                "space, %llu node%s in RAM%s\n"
                "expected IO: %llu bytes read, %llu bytes written\n",
                static_cast<unsigned long long>(records), config.record_size, version.c_str(),
                static_cast<unsigned long long>(config.constants.leaf_records),
                static_cast<unsigned long long>(config.constants.max_fanout), s.levels, s.levels == 1 ? "" : "s",
                static_cast<unsigned long long>(config.memory_bytes), s.passes, s.passes == 1 ? "" : "es",
                static_cast<unsigned long long>(s.nodes_on_disk), s.nodes_on_disk == 1 ? "" : "s",
                static_cast<unsigned long long>(s.nodes_in_memory), s.nodes_in_memory == 1 ? "" : "s",
                s.gather_by_index ? ", large records gathered by index" : "",
                static_cast<unsigned long long>(s.bytes_read), static_cast<unsigned long long>(s.bytes_written));
  return text;
}

// No --record-size: binary input (NUL bytes in its first block) is refused
// with a hint; the format is never guessed silently.
void require_record_size(const Config& config, io::BlockFile& source, std::uint64_t bytes) {
  if (config.record_size != 0) return;
  constexpr std::uint64_t kProbe = 64 * 1024;
  std::vector<char> head(std::min(bytes, kProbe));
  source.read_now(head.data(), 0, head.size());
  const std::string name = config.input_path == "-" ? "standard input" : "'" + config.input_path + "'";
  if (std::find(head.begin(), head.end(), '\0') != head.end()) {
    throw UsageError("input " + name + " is binary (NUL bytes in its first 64 KiB): give --record-size BYTES");
  }
  throw UsageError("input " + name + " is text: line records are not supported yet; give --record-size BYTES");
}

ExternalOptions executor_options(const Config& config) {
  return ExternalOptions{{config.record_size, config.seed, config.constants, config.device, config.threads},
                         config.memory_bytes};
}

}  // namespace

RunStats run(const Config& config) {
  const auto start = std::chrono::steady_clock::now();
  RunStats stats;
  const bool from_stdin = config.input_path == "-";
  std::unique_ptr<io::BlockFile> input;
  if (!from_stdin) input = io::BlockFile::open_input(config.input_path);

  if (config.dry_run) {
    if (from_stdin) throw UsageError("--dry-run needs an INPUT file, not standard input");
    const std::uint64_t bytes = input->size();
    require_record_size(config, *input, bytes);
    check_record_multiple(bytes, config.record_size);
    const std::uint64_t records = bytes / config.record_size;
    core::check_plan(records, config.constants);
    std::fputs(describe_schedule(records, config, plan_schedule(records, executor_options(config))).c_str(),
               stdout);
    return stats;
  }

  // The output is opened first so that a bad destination fails before any work.
  io::OutputFile output(config.output_path);
  auto scratch = io::BlockFile::create_scratch(scratch_directory(config));
  io::BlockFile* source = input.get();
  std::uint64_t bytes = 0;
  std::uint64_t scratch_offset = 0;
  if (from_stdin) {
    bytes = spool_stdin(*scratch);
    source = scratch.get();
    scratch_offset = bytes;
    stats.bytes_written += bytes;
  } else {
    bytes = input->size();
  }
  require_record_size(config, *source, bytes);
  check_record_multiple(bytes, config.record_size);
  const std::uint64_t records = bytes / config.record_size;
  core::check_plan(records, config.constants);

  ExternalOptions options = executor_options(config);
  const Schedule schedule = plan_schedule(records, options);
  ExternalStats e;
  {
    ProgressMeter progress(schedule.bytes_read + schedule.bytes_written, config.progress);
    options.progress_bytes = progress.counter();
    e = shuffle_external(*source, 0, records, *scratch, scratch_offset, options,
                         [&output](const std::byte* data, std::size_t n) { output.write(data, n); });
  }
  output.commit();

  stats.records = records;
  stats.bytes = bytes;
  stats.levels = core::plan_levels(records, config.constants);
  stats.passes = e.passes;
  stats.bytes_read = e.bytes_read;
  stats.bytes_written += e.bytes_written;
  stats.seconds_reading = e.seconds_reading;
  stats.seconds_shuffling = e.seconds_shuffling;
  stats.seconds_scattering = e.seconds_scattering;
  stats.seconds_writing = e.seconds_writing;
  stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  stats.peak_rss_bytes = peak_rss_bytes();
  return stats;
}

std::string format_result_line(const RunStats& s) {
  char line[768];
  std::snprintf(line, sizeof line,
                "RESULT records=%llu bytes=%llu levels=%u passes=%u seconds=%.3f bytes_read=%llu "
                "bytes_written=%llu peak_rss_bytes=%llu seconds_reading=%.3f seconds_shuffling=%.3f "
                "seconds_scattering=%.3f seconds_writing=%.3f",
                static_cast<unsigned long long>(s.records), static_cast<unsigned long long>(s.bytes),
                s.levels, s.passes, s.seconds, static_cast<unsigned long long>(s.bytes_read),
                static_cast<unsigned long long>(s.bytes_written),
                static_cast<unsigned long long>(s.peak_rss_bytes), s.seconds_reading, s.seconds_shuffling,
                s.seconds_scattering, s.seconds_writing);
  return line;
}

}  // namespace extshuffle::driver
