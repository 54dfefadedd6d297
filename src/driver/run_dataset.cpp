// run_dataset(): one dataset of a Job, shuf's modes apart (run_dataset.hpp).
#include "run_dataset.hpp"

#include <chrono>
#include <optional>

#include "dataset_output.hpp"
#include "dry_run_report.hpp"
#include "job_commit.hpp"
#include "modes/empty_run.hpp"
#include "modes/generated_run.hpp"
#include "modes/repeat_run.hpp"
#include "extshuffle/driver/peak_rss.hpp"

namespace extshuffle::driver {
namespace {

// The records a mode writes: -r's K draws, -e's or -i's items (all, or
// the first K), none for -n 0.
std::uint64_t mode_records(const modes::ModeSlices& options, bool empty) {
  if (options.input.repeat || empty) return options.input.repeat ? options.output.head_count : 0;
  if (modes::ItemPrinter::empty(options)) return 0;
  const std::uint64_t last = modes::ItemPrinter::last_index(options);
  return options.output.head_count <= last ? options.output.head_count : last + 1;
}

// Runs that are not one shuffle of an input: shuf's -r, -n 0, -e and -i,
// written into a stream output the Job commits as any other. A dry run of
// them writes nothing either.
std::optional<RunResult> run_mode(const JobOptions& options, const JobDataset& dataset, JobCommit& commit) {
  const modes::ModeSlices mode{options.run, options.input, options.output, options.mode};
  const bool repeat = options.input.repeat,
             empty = !repeat && modes::outputs_nothing_of_input(mode, dataset.inputs.front());
  if (!repeat && !empty && !options.mode.echo && !options.mode.integer_range) return std::nullopt;
  const auto start = std::chrono::steady_clock::now();
  RunResult result;
  if (options.run.dry_run) {
    result.dry_run_text = describe_mode(options);
    return result;
  }
  auto output = open_output(options, dataset);
  output->start_stream();
  modes::InputDescription described;  // -r's input (none for -e/-i items)
  result.stats = repeat  ? modes::run_repeat(mode, dataset.inputs.front(), *output, described)
                 : empty ? RunStats{}
                         : modes::run_generated(mode, *output);
  result.inputs = std::move(described.inputs);
  result.format = std::move(described.format);
  result.records_written = mode_records(mode, empty);
  output->finish_stream(result.records_written);
  result.outputs = output->files();
  commit.add(std::move(output));
  result.stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  result.stats.peak_rss_bytes = peak_rss_bytes();
  return result;
}

}  // namespace

RunResult run_dataset(const JobOptions& options, const JobDataset& dataset, JobCommit& commit,
                      CheckpointSlot checkpoint) {
  if (auto result = run_mode(options, dataset, commit)) return std::move(*result);
  // 1. The output first, so that a bad destination fails before any work.
  auto output = open_output(options, dataset);
  // 2-3. The input and its records.
  PreparedInput input = prepare_input(options, dataset, checkpoint);
  return run_prepared(options, std::move(input), std::move(output), commit);
}

}  // namespace extshuffle::driver
