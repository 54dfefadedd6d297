// One run, in order: check the config, open the output, prepare the input
// (open or spool it, detect its format, count its records), plan the
// schedule, shuffle through the executor for its record layout into the
// output, verify, commit. The pieces live in io (InputSource, OutputFile,
// compression), formats (format detection, .npy layout) and the executors.
#include "extshuffle/driver/run.hpp"

#include <sys/resource.h>

#include <chrono>
#include <cstdio>

#include "extshuffle/driver/external_executor.hpp"
#include "extshuffle/driver/variable_executor.hpp"
#include "extshuffle/errors.hpp"
#include "extshuffle/io/compression.hpp"
#include "extshuffle/io/input_source.hpp"
#include "extshuffle/io/output_file.hpp"
#include "empty_run.hpp"
#include "fixed_records.hpp"
#include "generated_run.hpp"
#include "input_layout.hpp"
#include "progress_meter.hpp"
#include "repeat_run.hpp"
#include "verification.hpp"

namespace extshuffle::driver {

struct PreparedInput::State {
  io::InputSource source;
  InputLayout layout;
};

PreparedInput::PreparedInput(std::unique_ptr<State> state) : state_(std::move(state)) {}
PreparedInput::PreparedInput(PreparedInput&&) noexcept = default;
PreparedInput& PreparedInput::operator=(PreparedInput&&) noexcept = default;
PreparedInput::~PreparedInput() = default;
std::uint64_t PreparedInput::records() const { return state_->layout.records; }
const std::string& PreparedInput::path() const { return state_->source.path(); }

namespace {

std::uint64_t peak_rss_bytes() {
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<std::uint64_t>(usage.ru_maxrss) * 1024;
}

ExternalOptions executor_options(const Config& config, const InputLayout& layout) {
  return ExternalOptions{{layout.record_size, config.seed, config.constants, config.device, config.threads},
                         config.memory_bytes};
}

VariableOptions variable_options(const Config& config, const InputLayout& layout) {
  VariableOptions options;
  static_cast<ExternalOptions&>(options) = executor_options(config, layout);
  options.syntax = layout.syntax;
  options.skip_blank = config.skip_empty;
  return options;
}

Schedule schedule_for(const Config& config, const InputLayout& layout, std::uint64_t bytes) {
  if (layout.text) {
    return plan_schedule_variable(layout.records, bytes - layout.data_offset, variable_options(config, layout));
  }
  return plan_schedule(layout.records, executor_options(config, layout));
}

std::string describe_schedule(const InputLayout& layout, const Config& config, const Schedule& s) {
  char what[128];
  if (layout.text) {
    std::snprintf(what, sizeof what, "%llu text records", static_cast<unsigned long long>(layout.records));
  } else {
    std::snprintf(what, sizeof what, "%llu records of %zu bytes", static_cast<unsigned long long>(layout.records),
                  layout.record_size);
  }
  const bool shipped = config.constants.leaf_records == core::kPlanV2.leaf_records &&
                       config.constants.max_fanout == core::kPlanV2.max_fanout;
  const std::string version =
      shipped ? "permutation version " + std::to_string(core::kPermutationVersion) : "testing constants";
  char text[1024];
  std::snprintf(text, sizeof text,
                "plan: %s, %s (L = %llu, F = %llu), %u level%s\n"
                "schedule: memory %llu bytes, %u pass%s through disk, %llu node%s streamed through scratch "
                "space, %llu node%s in RAM%s\n"
                "expected IO: %llu bytes read, %llu bytes written\n",
                what, version.c_str(), static_cast<unsigned long long>(config.constants.leaf_records),
                static_cast<unsigned long long>(config.constants.max_fanout), s.levels, s.levels == 1 ? "" : "s",
                static_cast<unsigned long long>(config.memory_bytes), s.passes, s.passes == 1 ? "" : "es",
                static_cast<unsigned long long>(s.nodes_on_disk), s.nodes_on_disk == 1 ? "" : "s",
                static_cast<unsigned long long>(s.nodes_in_memory), s.nodes_in_memory == 1 ? "" : "s",
                s.gather_by_index ? ", large records gathered by index" : "",
                static_cast<unsigned long long>(s.bytes_read), static_cast<unsigned long long>(s.bytes_written));
  return text;
}

// What can be checked before any input is read. Fixed-size records know
// their budget now; .npy rows and text records are checked by the
// executors once the input is read (BudgetError either way).
void check_config(const Config& config) {
  if (config.threads < 1) throw UsageError("invalid thread count " + std::to_string(config.threads));
  if (config.dry_run && config.input_path == "-" && !config.echo && !config.integer_range) {
    throw UsageError("--dry-run needs an INPUT file, not standard input");
  }
  if (config.record_size == 0) return;
  ExternalOptions fixed;  // the layout's own rule, before any input is opened
  fixed.record_size = config.record_size;
  fixed.constants = config.constants;
  FixedRecords(fixed).check_budget(0, 0, config.memory_bytes);
}

// Steps 4-6 of a run: shuffle the prepared input into `output` with the
// executor for its layout, digesting both sides with --verify, then commit.
RunResult shuffle_prepared(const Config& config, PreparedInput::State& prepared, io::OutputFile* output) {
  const auto start = std::chrono::steady_clock::now();
  io::InputSource& in = prepared.source;
  const InputLayout& layout = prepared.layout;
  const std::uint64_t bytes = in.bytes(), records = layout.records;
  RunResult result;
  RunStats& stats = result.stats;
  if (in.spooled()) stats.bytes_written += bytes;
  core::check_plan(records, config.constants);
  // 4. The schedule: what --dry-run describes and what the progress counts.
  const Schedule schedule = schedule_for(config, layout, bytes);
  if (config.dry_run) {
    result.dry_run_text = describe_schedule(layout, config, schedule);
    return result;
  }
  if (!layout.text && !layout.header.empty() && config.head_count < records) {
    throw UsageError("-n cannot shorten a .npy array: its header's shape would no longer match");
  }
  if (config.verify && config.head_count < records) {
    throw UsageError("--verify checks whole permutations: it cannot be combined with -n");
  }
  RecordDigest read_digest = layout.digest, written_digest;
  if (config.verify && !layout.text) {
    read_digest = digest_fixed_records(in.data(), layout.data_offset, records * layout.record_size,
                                       layout.record_size);
  }
  io::CompressingWriter writer(io::codec_for_path(config.output_path),
                               [output](const void* data, std::size_t n) { output->write(data, n); },
                               config.threads);
  writer.write(layout.header.data(), layout.header.size());
  // 5. The shuffle, through the executor for the record layout.
  ExternalStats e;
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
      const TextInput text{&in.data(), layout.data_offset, bytes - layout.data_offset,
                           layout.text_count.add_terminator && layout.data_offset < bytes};
      e = shuffle_variable(text, records, in.scratch(), in.scratch_offset(), options, sink);
    } else {
      ExternalOptions options = executor_options(config, layout);
      options.output_records = config.head_count;
      options.progress_bytes = progress.counter();
      e = shuffle_external(in.data(), layout.data_offset, records, in.scratch(), in.scratch_offset(), options, sink);
    }
  } catch (const std::runtime_error&) {
    // A failed read or a wrong record count may come from an input that
    // changed under the run: say so rather than what it caused.
    in.check_unchanged();
    throw;
  }
  // 6. Check, then commit.
  in.check_unchanged();
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
  return result;
}

std::unique_ptr<io::OutputFile> open_output(const Config& config) {
  return config.dry_run ? nullptr : std::make_unique<io::OutputFile>(config.output_path);
}

}  // namespace

PreparedInput prepare_input(const Config& config) {
  check_config(config);
  io::InputSource source(config.input_path, io::scratch_directory(config.tmpdir));
  InputLayout layout = read_input_layout(config, source);
  return PreparedInput(std::make_unique<PreparedInput::State>(std::move(source), std::move(layout)));
}

RunResult run(const Config& config, PreparedInput input) {
  check_config(config);
  const auto output = open_output(config);
  return shuffle_prepared(config, *input.state_, output.get());
}

RunResult run(const Config& config) {
  check_config(config);
  // Runs that are not one shuffle of an input: shuf's -r, -n 0, -e and -i.
  const bool repeat = config.repeat, empty = !repeat && outputs_nothing_of_input(config);
  if (repeat || empty || config.echo || config.integer_range) {
    const auto start = std::chrono::steady_clock::now();
    RunResult result{repeat ? run_repeat(config) : empty ? run_empty(config) : run_generated(config), {}};
    result.stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    result.stats.peak_rss_bytes = peak_rss_bytes();
    return result;
  }
  // 1. The output first, so that a bad destination fails before any work.
  const auto output = open_output(config);
  // 2-3. The input and its records.
  PreparedInput input = prepare_input(config);
  return shuffle_prepared(config, *input.state_, output.get());
}

}  // namespace extshuffle::driver
