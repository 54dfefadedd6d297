// One run, in order: check the config, open the output, prepare the input
// (open or spool each input file, detect its format, count its records, put
// the inputs together as one dataset), plan the schedule, shuffle through
// the executor for its record layout into the output files (cut into shards
// and splits as the records arrive), verify, commit. The pieces live in io
// (InputSet, OutputFile, compression), formats (format detection, .npy
// layout), dataset_input, sharded_output and the executors.
#include "extshuffle/driver/run.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "extshuffle/driver/external_executor.hpp"
#include "extshuffle/driver/variable_executor.hpp"
#include "extshuffle/errors.hpp"
#include "extshuffle/io/input_set.hpp"
#include "dataset_input.hpp"
#include "empty_run.hpp"
#include "generated_run.hpp"
#include "progress_meter.hpp"
#include "sharded_output.hpp"
#include "repeat_run.hpp"
#include "verification.hpp"

namespace extshuffle::driver {

struct PreparedInput::State {
  io::InputSet inputs;
  DatasetInput dataset;
  InputMapping mapping;  // a text input that may fit in RAM, mapped while counted
};

PreparedInput::PreparedInput(std::unique_ptr<State> state) : state_(std::move(state)) {}
PreparedInput::PreparedInput(PreparedInput&&) noexcept = default;
PreparedInput& PreparedInput::operator=(PreparedInput&&) noexcept = default;
PreparedInput::~PreparedInput() = default;
std::uint64_t PreparedInput::records() const { return state_->dataset.layout.records; }
const std::string& PreparedInput::path() const { return state_->inputs[0].path(); }

namespace {

// Memory a run takes beside the executor's arena: the program itself (code,
// libraries, STXXL's threads: about 6 MiB, the peak RSS of a run on a few
// records) and as much of the output file's two 1 MiB buffers as the output
// fills.
constexpr std::uint64_t kProgramBytes = std::uint64_t{6} << 20;
constexpr std::uint64_t kOutputBufferBytes = std::uint64_t{2} << 20;
// The counting pass of text, before the arena exists: its piece and the two
// it reads in turn (text_input.cpp), 2 MiB each.
constexpr std::uint64_t kCountingBytes = std::uint64_t{6} << 20;

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

// The inputs of the run's one dataset, directories expanded.
std::vector<std::string> dataset_paths(const Config& config) {
  return io::expand_input_paths(config.input_paths.empty() ? std::vector<std::string>{config.input_path}
                                                           : config.input_paths);
}

// The schedule of a dataset of `record_bytes` bytes of records. For text,
// from what the counting pass found: the longest record and the records'
// spread in size (node_path.hpp).
Schedule schedule_for(const Config& config, const InputLayout& layout, std::uint64_t record_bytes) {
  if (layout.text) {
    const double n = static_cast<double>(std::max<std::uint64_t>(layout.records, 1));
    const double mean = static_cast<double>(record_bytes) / n;
    const double variance = std::max(0.0, layout.text_count.record_bytes_squared / n - mean * mean);
    return plan_schedule_variable(layout.records, record_bytes, layout.text_count.longest_record_bytes,
                                  variable_options(config, layout), variance);
  }
  return plan_schedule(layout.records, executor_options(config, layout));
}

// The smallest budget, in whole MiB, above the configured one with which
// the run makes fewer than `passes` passes: bisection over the schedule (no
// IO), up to 2^60 bytes; 0 if none.
std::uint64_t mebibytes_for_fewer_passes(Config config, const InputLayout& layout, std::uint64_t record_bytes,
                                         std::uint32_t passes) {
  auto passes_at = [&](std::uint64_t bytes) {
    config.memory_bytes = bytes;
    return schedule_for(config, layout, record_bytes).passes;
  };
  std::uint64_t low = config.memory_bytes, high = std::max<std::uint64_t>(1, low);
  while (passes_at(high) >= passes) {  // invariant: `low` makes as many passes
    low = high;
    if (high >= (std::uint64_t{1} << 60)) return 0;
    high *= 2;
  }
  while (high - low > 1024) {
    const std::uint64_t middle = low + (high - low) / 2;
    (passes_at(middle) < passes ? high : low) = middle;
  }
  const std::uint64_t mebibytes = (high + (std::uint64_t{1} << 20) - 1) >> 20;
  return passes_at(mebibytes << 20) < passes ? mebibytes : 0;
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
  auto u = [](std::uint64_t x) { return static_cast<unsigned long long>(x); };
  char routed[192] = "", windows[96] = "";
  if (s.nodes_routed > 0) {
    char into[96] = "";
    if (s.nodes_into_windows > 0) {
      std::snprintf(into, sizeof into, ", %llu into their leaves' windows%s", u(s.nodes_into_windows),
                    s.leaf_orders_on_disk > 0 ? " (leaf orders through scratch space)" : "");
    }
    std::snprintf(routed, sizeof routed, " (%llu routed record by record: chunks larger than memory%s)",
                  u(s.nodes_routed), into);
  }
  if (s.nodes_in_windows > 0) {
    std::snprintf(windows, sizeof windows, ", %llu lea%s larger than memory placed window by window",
                  u(s.nodes_in_windows), s.nodes_in_windows == 1 ? "f" : "ves");
  }
  char text[1280];
  std::snprintf(text, sizeof text,
                "plan: %s, %s (L = %llu, F = %llu), %u level%s\n"
                "schedule: memory %llu bytes, %u pass%s through disk, %llu node%s streamed through scratch "
                "space%s%s, %llu node%s in RAM\n"
                "expected IO: %llu bytes read, %llu bytes written%s; peak memory %llu bytes\n",
                what, version.c_str(), u(config.constants.leaf_records), u(config.constants.max_fanout), s.levels,
                s.levels == 1 ? "" : "s", u(config.memory_bytes), s.passes, s.passes == 1 ? "" : "es",
                u(s.nodes_on_disk), s.nodes_on_disk == 1 ? "" : "s", routed, windows, u(s.nodes_in_memory),
                s.nodes_in_memory == 1 ? "" : "s", u(s.bytes_read), u(s.bytes_written),
                layout.text ? " (the count of the records included)" : "", u(s.peak_memory_bytes));
  return text;
}

// What a larger budget would save: the budget of each smaller pass count.
std::string describe_fewer_passes(const InputLayout& layout, const Config& config, std::uint64_t record_bytes,
                                  std::uint32_t passes) {
  std::string text;
  for (std::uint32_t p = passes; p > 1;) {
    const std::uint64_t mebibytes = mebibytes_for_fewer_passes(config, layout, record_bytes, p);
    if (mebibytes == 0) break;
    Config larger = config;
    larger.memory_bytes = mebibytes << 20;
    p = schedule_for(larger, layout, record_bytes).passes;
    text += (text.empty() ? "fewer passes: " : ", ") + std::to_string(p) + (p == 1 ? " pass (in RAM)" : " passes") +
            " from -S " + std::to_string(mebibytes) + "M";
  }
  return text.empty() ? text : text + "\n";
}

// What can be checked before any input is read. The budget's minimum
// depends on the record count: the executors check it once the input is
// opened, before any work (BudgetError).
void check_config(const Config& config) {
  if (config.threads < 1) throw UsageError("invalid thread count " + std::to_string(config.threads));
  const bool reads_stdin = config.input_paths.empty()
                               ? config.input_path == "-"
                               : std::find(config.input_paths.begin(), config.input_paths.end(), "-") !=
                                     config.input_paths.end();
  if (config.dry_run && reads_stdin && !config.echo && !config.integer_range) {
    throw UsageError("--dry-run needs an INPUT file, not standard input");
  }
}

// The output files as the config asks for them (sharded_output.hpp).
OutputSpec output_spec(const Config& config) {
  OutputSpec spec;
  spec.pattern = config.output_path;
  spec.splits = config.splits;
  spec.shard_count = config.shard_count;
  spec.shard_bytes = config.shard_bytes;
  spec.threads = config.threads;
  spec.read_back = config.verify;
  spec.clean = config.clean;
  return spec;
}

// Records that fractions adding up to less than 1 leave out of every split.
std::string left_out_warning(const ShardedOutput& output, std::uint64_t written) {
  return "--split: " + std::to_string(output.records_left_out()) + " of the " +
         std::to_string(written + output.records_left_out()) +
         " records are in no split and are not written (a split of size 'rest' takes them)";
}

// Files of the output pattern that this run did not write.
std::string stale_warning(const Config& config, const std::vector<std::string>& stale) {
  std::string names;
  for (std::size_t k = 0; k < stale.size() && k < 5; ++k) names += (k > 0 ? ", '" : "'") + stale[k] + "'";
  if (stale.size() > 5) names += " and " + std::to_string(stale.size() - 5) + " more";
  const std::string count = std::to_string(stale.size()) + (stale.size() == 1 ? " file" : " files");
  if (config.clean) return "removed " + count + " of -o '" + config.output_path + "' that this run did not write: " + names;
  return count + " of -o '" + config.output_path + "' not written by this run (an older run's?): " + names +
         " (--clean removes them)";
}

// What a tar dataset's reading skipped, for -v.
std::vector<std::string> tar_notes(const DatasetInput& dataset) {
  std::uint64_t skipped = 0;
  for (const auto& index : dataset.tar_indexes) skipped += index->skipped_members;
  if (skipped == 0) return {};
  return {"tar: " + std::to_string(skipped) + " members that are not regular files (directories, links, devices, "
          "FIFOs) skipped, as webdataset skips them"};
}

// Steps 4-6 of a run: shuffle the prepared dataset into `output` with the
// executor for its layout, digesting both sides with --verify, then commit.
RunResult shuffle_prepared(const Config& config, PreparedInput::State& prepared, ShardedOutput* output) {
  const auto start = std::chrono::steady_clock::now();
  io::InputSet& in = prepared.inputs;
  const DatasetInput& dataset = prepared.dataset;
  const InputLayout& layout = dataset.layout;
  const std::uint64_t records = layout.records;
  RunResult result;
  RunStats& stats = result.stats;
  stats.bytes_written += in.spooled_bytes();
  core::check_plan(records, config.constants);
  // 4. The schedule: what --dry-run describes and what the progress counts.
  //    Text was read once already, to count its records; one input that
  //    fits in RAM was mapped then, so the run in RAM reads nothing more.
  Schedule schedule = schedule_for(config, layout, dataset.data.bytes);
  const std::uint64_t counted_bytes = layout.text ? dataset.bytes : 0;
  schedule.bytes_read += counted_bytes;
  const bool mapped = layout.text && !layout.tar && dataset.files.size() == 1 && maps_while_counting(dataset.bytes, config.memory_bytes);
  if (mapped && schedule.nodes_in_memory == 1 && schedule.nodes_on_disk + schedule.nodes_in_windows == 0) {
    schedule.bytes_read -= dataset.data.bytes;
  }
  schedule.peak_memory_bytes =
      kProgramBytes + std::max(schedule.peak_memory_bytes + std::min(dataset.data.bytes, kOutputBufferBytes),
                               layout.text && !mapped ? kCountingBytes : 0);
  if (config.dry_run) {
    result.dry_run_text = describe_schedule(layout, config, schedule) +
                          describe_fewer_passes(layout, config, dataset.data.bytes, schedule.passes);
    return result;
  }
  // The files take the first `wanted` records: -n, or where the last split ends.
  // (A .npy array with no bytes to move, rows of zero bytes included, keeps its header.)
  const OutputRecordForm form{layout.text ? 0 : layout.record_size, layout.syntax, layout.header,
                              layout.format.layout == formats::RecordLayout::kNpy && records > 0,
                              layout.tar ? std::string(formats::kTarTrailerBytes, '\0') : std::string()};
  const std::uint64_t wanted = output->start(form, std::min(config.head_count, records));
  if (output->records_left_out() > 0) result.warnings.push_back(left_out_warning(*output, wanted));
  if (config.verify && wanted < records) {
    throw UsageError(config.head_count < records
                         ? "--verify checks whole permutations: it cannot be combined with -n"
                         : "--verify checks whole permutations: it cannot be combined with a --split that leaves "
                           "records out");
  }
  const RecordDigest& read_digest = layout.digest;
  RecordDigest written_digest;
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
      output->write(data, n);
    };
    if (layout.text) {
      VariableOptions options = variable_options(config, layout);
      options.output_records = wanted;
      options.progress_bytes = progress.counter();
      LoadedRecords loaded{std::move(prepared.mapping.mapped), dataset.loaded};
      e = shuffle_variable(dataset.data, records, layout.text_count.longest_record_bytes, in.scratch(),
                           in.scratch_offset(), options, sink, loaded.mapped ? &loaded : nullptr);
    } else {
      ExternalOptions options = executor_options(config, layout);
      options.output_records = wanted;
      options.progress_bytes = progress.counter();
      e = shuffle_external(dataset.data, records, in.scratch(), in.scratch_offset(), options, sink);
    }
  } catch (const std::runtime_error&) {
    // A failed read or a wrong record count may come from an input that
    // changed under the run: say so rather than what it caused.
    in.check_unchanged();
    throw;
  }
  // 6. Check, then commit: every file is complete and fsynced before the first is renamed.
  in.check_unchanged();
  if (config.verify) check_digests(read_digest, written_digest);
  output->finish();
  output->commit();
  result.stale_pieces = output->stale_pieces();
  if (!result.stale_pieces.empty()) {
    (config.clean ? result.notes : result.warnings).push_back(stale_warning(config, result.stale_pieces));
  }

  result.inputs = dataset.files;
  result.format = format_name(layout.format);
  if (layout.tar) result.notes = tar_notes(dataset);
  result.records_written = wanted;
  result.outputs = output->files();
  stats.records = records;
  stats.bytes = dataset.bytes;
  stats.levels = core::plan_levels(records, config.constants);
  stats.passes = e.passes;
  stats.bytes_read = counted_bytes + e.bytes_read;
  stats.bytes_written += e.bytes_written;
  stats.seconds_reading = e.seconds_reading;
  stats.seconds_shuffling = e.seconds_shuffling;
  stats.seconds_scattering = e.seconds_scattering;
  stats.seconds_writing = e.seconds_writing;
  stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  stats.peak_rss_bytes = peak_rss_bytes();
  return result;
}

std::unique_ptr<ShardedOutput> open_output(const Config& config) {
  return config.dry_run ? nullptr : std::make_unique<ShardedOutput>(output_spec(config));
}

}  // namespace

PreparedInput prepare_input(const Config& config) {
  check_config(config);
  io::InputSet inputs(dataset_paths(config), io::scratch_directory(config.tmpdir));
  // One text input that may fit in RAM is mapped and counted where it
  // lies, and so read once (InputMapping).
  InputMapping mapping;
  mapping.budget_bytes = config.memory_bytes;
  DatasetInput dataset = read_dataset(config, inputs, config.dry_run ? nullptr : &mapping);
  return PreparedInput(
      std::make_unique<PreparedInput::State>(std::move(inputs), std::move(dataset), std::move(mapping)));
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
    RunResult result;
    result.stats = repeat ? run_repeat(config) : empty ? run_empty(config) : run_generated(config);
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
