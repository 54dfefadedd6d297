#include "extshuffle/driver/run.hpp"

#include <sys/resource.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <vector>

#include "extshuffle/driver/errors.hpp"
#include "extshuffle/driver/external_executor.hpp"
#include "extshuffle/driver/variable_executor.hpp"
#include "extshuffle/formats/npy_header.hpp"
#include "extshuffle/io/aligned_buffer.hpp"
#include "extshuffle/io/block_file.hpp"
#include "extshuffle/io/compression.hpp"
#include "extshuffle/io/output_file.hpp"
#include "progress_meter.hpp"
#include "text_input.hpp"
#include "verification.hpp"

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

// Copies a stream (standard input, or a compressed file as it is
// decompressed) into the scratch file so that it can be read at random
// offsets; returns its size in bytes. Writes are double-buffered: one piece
// is written behind while the next is read.
std::uint64_t spool(io::DecompressingReader& reader, io::BlockFile& scratch) {
  constexpr std::size_t kPiece = std::size_t{8} << 20;
  const io::AlignedBuffer buffers = io::allocate_aligned(2 * kPiece);
  io::PendingIo pending;
  std::uint64_t size = 0;
  for (int current = 0;; current ^= 1) {
    std::byte* buffer = buffers.get() + current * kPiece;
    const std::size_t fill = reader.read(buffer, kPiece);
    if (fill == 0) break;
    pending.wait();
    pending = scratch.write(buffer, size, fill);
    size += fill;
    if (fill < kPiece) break;
  }
  pending.wait();
  return size;
}

// The input as the executor reads it: the file itself, or its spool in
// scratch space (standard input, compressed files).
struct InputSource {
  std::unique_ptr<io::BlockFile> file;
  std::unique_ptr<io::BlockFile> scratch;
  io::BlockFile* source = nullptr;
  std::uint64_t bytes = 0;           // of the (decompressed) input
  std::uint64_t scratch_offset = 0;  // scratch space below this holds the spool
  std::uint64_t file_bytes = 0;      // the input file's size at the start; compared at the end
  bool spooled = false;
};

InputSource open_source(const Config& config) {
  InputSource in;
  const io::Codec codec = io::codec_for_path(config.input_path);
  const bool from_stdin = config.input_path == "-";
  if (!from_stdin) {
    in.file = io::BlockFile::open_input(config.input_path);
    in.file_bytes = in.file->size();
  }
  in.scratch = io::BlockFile::create_scratch(scratch_directory(config));
  if (from_stdin || codec != io::Codec::kNone) {
    int fd = 0;
    if (!from_stdin) {
      fd = ::open(config.input_path.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) throw IoError("cannot open input", config.input_path, errno);
    }
    struct CloseFd {
      int fd;
      ~CloseFd() {
        if (fd > 0) ::close(fd);
      }
    } close_fd{fd};
    io::DecompressingReader reader(fd, codec, from_stdin ? "standard input" : config.input_path);
    in.bytes = spool(reader, *in.scratch);
    in.source = in.scratch.get();
    in.scratch_offset = (in.bytes + 4095) / 4096 * 4096;
    in.spooled = true;
  } else {
    in.source = in.file.get();
    in.bytes = in.file_bytes;
  }
  return in;
}

int compression_threads(const Config& config) {
  return config.threads > 0 ? config.threads : static_cast<int>(std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN)));
}

void check_record_multiple(std::uint64_t bytes, std::size_t record_size) {
  if (bytes % record_size != 0) {
    throw InputError("input size " + std::to_string(bytes) + " bytes is not a multiple of the record size " +
                     std::to_string(record_size) + " (remainder " + std::to_string(bytes % record_size) +
                     " bytes)");
  }
}


// Where the records are and how large: fixed-size records from offset 0,
// the rows of a .npy array after its header, or text records (lines, CSV)
// after the header lines; the output repeats the header.
struct InputLayout {
  std::uint64_t data_offset = 0;
  std::size_t record_size = 0;  // 0 for text records
  std::uint64_t records = 0;
  std::string header;  // written to the output before the shuffled records
  bool text = false;
  formats::RecordSyntax syntax;
  TextCount text_count;
  RecordDigest digest;  // of the records read, with --verify
};

std::string read_head(io::BlockFile& source, std::uint64_t bytes, std::uint64_t wanted) {
  std::string head(std::min(bytes, wanted), '\0');
  source.read_now(head.data(), 0, head.size());
  return head;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The text format a file's name announces (under .gz, .zst), or kAuto.
Format format_by_extension(std::string name) {
  for (const char* compressed : {".gz", ".zst", ".zstd"}) {
    if (ends_with(name, compressed)) name.resize(name.size() - std::strlen(compressed));
  }
  if (ends_with(name, ".csv")) return Format::kCsv;
  if (ends_with(name, ".tsv")) return Format::kTsv;
  if (ends_with(name, ".jsonl") || ends_with(name, ".ndjson")) return Format::kJsonl;
  return Format::kAuto;
}

InputLayout text_layout(const Config& config, Format format, io::BlockFile& source, std::uint64_t bytes,
                        const std::string& name) {
  InputLayout layout;
  layout.text = true;
  layout.syntax.terminator = config.zero_terminated ? '\0' : '\n';
  layout.syntax.quoted = format == Format::kCsv;
  const std::uint64_t header_lines =
      config.header_lines >= 0 ? static_cast<std::uint64_t>(config.header_lines)
                               : (format == Format::kCsv || format == Format::kTsv ? 1 : 0);
  layout.text_count = count_text_records(source, bytes, layout.syntax, header_lines, config.skip_empty, name,
                                         config.verify ? &layout.digest : nullptr);
  layout.records = layout.text_count.records;
  layout.data_offset = layout.text_count.header_bytes;
  layout.header = read_head(source, bytes, layout.data_offset);
  // A file of only a header whose last line lacks its terminator gets one.
  if (layout.data_offset == bytes && layout.text_count.add_terminator) layout.header += layout.syntax.terminator;
  return layout;
}

// The format is never guessed silently: a .npy file is recognised by its
// magic; otherwise --record-size must be given, and without it the first
// 64 KiB decide the message (binary: NUL bytes; text).
InputLayout input_layout(const Config& config, io::BlockFile& source, std::uint64_t bytes) {
  const std::string name = config.input_path == "-" ? "standard input" : "'" + config.input_path + "'";
  constexpr std::uint64_t kProbe = 64 * 1024;
  std::string head = read_head(source, bytes, kProbe);
  InputLayout layout;
  Format format = config.format;
  if (format == Format::kAuto && config.record_size == 0) format = format_by_extension(config.input_path);
  if (config.zero_terminated && format == Format::kAuto) format = Format::kLines;
  if (format != Format::kAuto && format != Format::kBinary) {
    if (config.record_size != 0) throw UsageError("--record-size is for binary records, not text formats");
    return text_layout(config, format, source, bytes, name);
  }
  if (formats::starts_with_npy_magic(head)) {
    // A header longer than the probe (numpy writes a few hundred bytes) is read whole.
    if (head.size() >= 12) {
      const std::uint64_t declared = formats::parse_npy_header_size(head);
      if (declared > head.size() && declared <= bytes) head = read_head(source, bytes, declared);
    }
    const formats::NpyHeader npy = formats::parse_npy_header(head, name);
    if (config.record_size != 0 && config.record_size != npy.row_bytes) {
      throw UsageError("input " + name + " is a .npy array whose rows are " + std::to_string(npy.row_bytes) +
                       " bytes, not --record-size " + std::to_string(config.record_size));
    }
    const std::uint64_t data_bytes = bytes - npy.header_bytes;
    if (data_bytes != npy.rows * npy.row_bytes) {
      throw InputError("input " + name + ": .npy data holds " + std::to_string(data_bytes) +
                       " bytes but its shape and dtype need " + std::to_string(npy.rows * npy.row_bytes));
    }
    layout.data_offset = npy.header_bytes;
    // Rows of zero bytes (a dimension of extent 0) leave nothing to move.
    layout.record_size = std::max<std::uint64_t>(npy.row_bytes, 1);
    layout.records = npy.row_bytes == 0 ? 0 : npy.rows;
    layout.header = head.substr(0, npy.header_bytes);
    return layout;
  }
  if (config.record_size == 0) {
    if (format == Format::kBinary) throw UsageError("--format binary needs --record-size BYTES");
    if (head.find('\0') != std::string::npos) {
      throw UsageError("input " + name +
                       " is binary (NUL bytes in its first 64 KiB): give --record-size BYTES, or --format lines "
                       "(or -z) to shuffle it as text");
    }
    return text_layout(config, Format::kLines, source, bytes, name);
  }
  check_record_multiple(bytes, config.record_size);
  layout.record_size = config.record_size;
  layout.records = bytes / config.record_size;
  return layout;
}

ExternalOptions executor_options(const Config& config, const InputLayout& layout) {
  return ExternalOptions{{layout.record_size, config.seed, config.constants, config.device, config.threads},
                         config.memory_bytes};
}

// Throws InputError when the input file is no longer the size it had when
// the run began (a writer appending to it, a truncation): the output would
// hold neither the old records nor the new ones.
void check_input_unchanged(const Config& config, std::uint64_t bytes_at_start) {
  struct stat now {};
  if (config.input_path == "-" || ::stat(config.input_path.c_str(), &now) != 0) return;
  // A spooled input (compressed) was read whole at the start: nothing to check.
  if (static_cast<std::uint64_t>(now.st_size) != bytes_at_start) {
    throw InputError("input '" + config.input_path + "' changed size during the run (" +
                     std::to_string(bytes_at_start) + " bytes at the start, " + std::to_string(now.st_size) +
                     " now)");
  }
}

std::string describe_schedule(const InputLayout& layout, const Config& config, const Schedule& s) {
  char what[128];
  if (layout.text) {
    std::snprintf(what, sizeof what, "%llu text records",
                  static_cast<unsigned long long>(layout.records));
  } else {
    std::snprintf(what, sizeof what, "%llu records of %zu bytes",
                  static_cast<unsigned long long>(layout.records), layout.record_size);
  }
  const bool shipped = config.constants.leaf_records == core::kPlanV1.leaf_records &&
                       config.constants.max_fanout == core::kPlanV1.max_fanout;
  const std::string version =
      shipped ? "permutation version " + std::to_string(core::kPermutationVersion) : "testing constants";
  char text[1024];
  std::snprintf(text, sizeof text,
                "plan: %s, %s (L = %llu, F = %llu), %u level%s\n"
                "schedule: memory %llu bytes, %u pass%s through disk, %llu node%s streamed through scratch "
                "space, %llu node%s in RAM%s\n"
                "expected IO: %llu bytes read, %llu bytes written\n",
                what, version.c_str(),
                static_cast<unsigned long long>(config.constants.leaf_records),
                static_cast<unsigned long long>(config.constants.max_fanout), s.levels, s.levels == 1 ? "" : "s",
                static_cast<unsigned long long>(config.memory_bytes), s.passes, s.passes == 1 ? "" : "es",
                static_cast<unsigned long long>(s.nodes_on_disk), s.nodes_on_disk == 1 ? "" : "s",
                static_cast<unsigned long long>(s.nodes_in_memory), s.nodes_in_memory == 1 ? "" : "s",
                s.gather_by_index ? ", large records gathered by index" : "",
                static_cast<unsigned long long>(s.bytes_read), static_cast<unsigned long long>(s.bytes_written));
  return text;
}

VariableOptions variable_options(const Config& config, const InputLayout& layout) {
  VariableOptions options;
  static_cast<ExternalOptions&>(options) = executor_options(config, layout);
  options.syntax = layout.syntax;
  options.skip_blank = config.skip_empty;
  return options;
}

Schedule schedule_for(const Config& config, const InputLayout& layout, std::uint64_t bytes) {
  if (layout.text) return plan_schedule_variable(layout.records, bytes - layout.data_offset, variable_options(config, layout));
  return plan_schedule(layout.records, executor_options(config, layout));
}

}  // namespace

std::uint64_t input_records(const Config& config) {
  InputSource in = open_source(config);
  return input_layout(config, *in.source, in.bytes).records;
}

// -e and -i: the items are the indices 0..N-1 written as 8-byte records to
// scratch space and shuffled by the executor like any file of N records (so
// the order is P(seed, N)); the sink prints the item each index names.
RunStats run_generated(const Config& config) {
  const auto start = std::chrono::steady_clock::now();
  const std::uint64_t n = config.echo ? config.echo_items.size() : config.range_high + 1 - config.range_low;
  core::check_plan(n, config.constants);
  io::OutputFile output(config.output_path);
  io::CompressingWriter writer(io::codec_for_path(config.output_path),
                               [&output](const void* data, std::size_t n) { output.write(data, n); },
                               compression_threads(config));
  auto scratch = io::BlockFile::create_scratch(scratch_directory(config));
  std::vector<std::uint64_t> indices(std::min<std::uint64_t>(n, std::uint64_t{1} << 20));
  for (std::uint64_t first = 0; first < n; first += indices.size()) {
    const std::uint64_t count = std::min<std::uint64_t>(indices.size(), n - first);
    for (std::uint64_t k = 0; k < count; ++k) indices[k] = first + k;
    scratch->write_now(indices.data(), first * 8, count * 8);
  }
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
  stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  stats.peak_rss_bytes = peak_rss_bytes();
  return stats;
}

RunStats run(const Config& config) {
  if (config.echo || config.integer_range) return run_generated(config);
  const auto start = std::chrono::steady_clock::now();
  RunStats stats;
  if (config.dry_run && config.input_path == "-") {
    throw UsageError("--dry-run needs an INPUT file, not standard input");
  }
  // The output is opened first so that a bad destination fails before any work.
  std::unique_ptr<io::OutputFile> output;
  if (!config.dry_run) output = std::make_unique<io::OutputFile>(config.output_path);
  InputSource in = open_source(config);
  if (in.spooled) stats.bytes_written += in.bytes;
  const std::uint64_t bytes = in.bytes;
  const InputLayout layout = input_layout(config, *in.source, bytes);
  const std::uint64_t records = layout.records;
  core::check_plan(records, config.constants);
  if (config.dry_run) {
    const Schedule schedule = schedule_for(config, layout, bytes);
    std::fputs(describe_schedule(layout, config, schedule).c_str(), stdout);
    return stats;
  }
  if (!layout.text && !layout.header.empty() && config.head_count < records) {
    throw UsageError("-n cannot shorten a .npy array: its header's shape would no longer match");
  }
  if (config.verify && config.head_count < records) {
    throw UsageError("--verify checks whole permutations: it cannot be combined with -n");
  }
  RecordDigest read_digest = layout.digest, written_digest;
  if (config.verify && !layout.text) {
    read_digest = digest_fixed_records(*in.source, layout.data_offset, records * layout.record_size,
                                       layout.record_size);
  }
  io::CompressingWriter writer(io::codec_for_path(config.output_path),
                               [&output](const void* data, std::size_t n) { output->write(data, n); },
                               compression_threads(config));
  writer.write(layout.header.data(), layout.header.size());

  const Schedule schedule = schedule_for(config, layout, bytes);
  ExternalStats e;
  // Only an input read in place can change under the run.
  const bool in_place = !in.spooled;
  try {
    ProgressMeter progress(schedule.bytes_read + schedule.bytes_written, config.progress);
    const OutputSink sink = [&](const std::byte* data, std::size_t n) {
      if (config.verify) {
        if (layout.text) {
          add_text_records(written_digest, data, n, layout.syntax);
        } else {
          written_digest.add_fixed(data, n, layout.record_size);
        }
      }
      writer.write(data, n);
    };
    if (layout.text) {
      VariableOptions options = variable_options(config, layout);
      options.output_records = config.head_count;
      options.progress_bytes = progress.counter();
      const TextInput text{in.source, layout.data_offset, bytes - layout.data_offset,
                           layout.text_count.add_terminator && layout.data_offset < bytes};
      e = shuffle_variable(text, records, *in.scratch, in.scratch_offset, options, sink);
    } else {
      ExternalOptions options = executor_options(config, layout);
      options.output_records = config.head_count;
      options.progress_bytes = progress.counter();
      e = shuffle_external(*in.source, layout.data_offset, records, *in.scratch, in.scratch_offset, options, sink);
    }
  } catch (const std::invalid_argument& error) {
    throw UsageError(error.what());  // a budget too small for the input's records
  } catch (const std::runtime_error&) {
    // A failed read or a wrong record count may come from an input that
    // changed under the run: say so rather than what it caused.
    if (in_place) check_input_unchanged(config, in.file_bytes);
    throw;
  }
  if (in_place) check_input_unchanged(config, in.file_bytes);
  if (config.verify) check_digests(read_digest, written_digest);
  writer.finish();
  output->commit();

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
