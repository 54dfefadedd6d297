// One dataset's input prepared, then shuffled into its output: prepare the
// input (open or spool each input file, detect its format, count its
// records, put the inputs together as one dataset), plan the schedule,
// shuffle through the walk for its record layout into the output files (cut
// into shards and splits as the records arrive), verify; the Job's commit
// then publishes them. The pieces live in io (InputSet, OutputFile,
// compression), formats (format detection, .npy layout), dataset (inputs as
// one dataset, sharded output, verification) and the walk (ioperm, layouts).
#include "prepared_input.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <spdlog/spdlog.h>

#include "dataset/dataset_input.hpp"
#include "dataset/sharded_output.hpp"
#include "dry_run_report.hpp"
#include "extshuffle/dataset/dataset_paths.hpp"
#include "extshuffle/dataset/index_identity.hpp"
#include "extshuffle/dataset/stale_pieces.hpp"
#include "extshuffle/dataset/verification.hpp"
#include "extshuffle/driver/progress_meter.hpp"
#include "extshuffle/errors.hpp"
#include "extshuffle/io/input_set.hpp"
#include "extshuffle/io/scratch_space.hpp"
#include "extshuffle/ioperm/fixed_size_shuffle.hpp"
#include "extshuffle/ioperm/text_shuffle.hpp"
#include "job_commit.hpp"
#include "extshuffle/driver/peak_rss.hpp"
#include "run_checkpoint.hpp"
#include "extshuffle/driver/run_identity.hpp"
#include "run_notes.hpp"

namespace extshuffle::driver {

using dataset::DatasetInput;
using dataset::InputLayout;
using dataset::InputMapping;
using dataset::RecordDigest;
using dataset::ShardedOutput;

struct PreparedInput::State {
  io::InputSet inputs;
  DatasetInput dataset;
  InputMapping mapping;                     // an input that may fit in RAM, mapped (text: while counted)
  DatasetCheckpoint* checkpoint = nullptr;  // --checkpoint: the dataset's part
};

PreparedInput::PreparedInput(std::unique_ptr<State> state) : state_(std::move(state)) {}
PreparedInput::PreparedInput(PreparedInput&&) noexcept = default;
PreparedInput& PreparedInput::operator=(PreparedInput&&) noexcept = default;
PreparedInput::~PreparedInput() = default;
std::uint64_t PreparedInput::records() const { return state_->dataset.layout.records; }
const std::string& PreparedInput::path() const { return state_->inputs[0].path(); }

namespace {

// Memory a run takes beside the walk's arena: the program itself (code,
// libraries, STXXL's threads: about 6 MiB, the peak RSS of a run on a few
// records) and as much of the output file's two 1 MiB buffers as the output
// fills.
constexpr std::uint64_t kProgramBytes = std::uint64_t{6} << 20;
constexpr std::uint64_t kOutputBufferBytes = std::uint64_t{2} << 20;
// The counting pass of text, before the arena exists: its piece and the two
// it reads in turn (dataset/text_input.cpp), 2 MiB each.
constexpr std::uint64_t kCountingBytes = std::uint64_t{6} << 20;

// Step 4: the schedule, as --dry-run describes it and the progress counts
// it. Text was read once already, to count its records; one input that fits
// in RAM was mapped then, so the run in RAM reads nothing more.
ioperm::Schedule expected_schedule(const JobOptions& options, const DatasetInput& dataset) {
  const InputLayout& layout = dataset.layout;
  ioperm::Schedule schedule = schedule_for(options, layout, dataset.data.bytes);
  // Text read to count its records, but the inputs whose counts were the checkpoint's.
  schedule.bytes_read += dataset.counted_bytes;
  const bool mapped = layout.framed() && layout.syntax.framing != formats::Framing::kTarSample &&
                      dataset.files.size() == 1 && ioperm::maps_input(dataset.bytes, options.run.memory_bytes);
  if (mapped && schedule.nodes_in_memory == 1 && schedule.nodes_on_disk + schedule.nodes_in_windows == 0) {
    schedule.bytes_read -= dataset.data.bytes;
  }
  schedule.peak_memory_bytes =
      kProgramBytes + std::max(schedule.peak_memory_bytes + std::min(dataset.data.bytes, kOutputBufferBytes),
                               layout.framed() && !mapped ? kCountingBytes : 0);
  return schedule;
}

// How the output files' indexes (--index) say their records are read: as
// the input's, with no blank records (none is written) and no zero blocks
// inside (each file is one archive).
dataset::IndexReading output_index_reading(const JobOptions& options, const InputLayout& layout) {
  dataset::IndexReading reading = dataset::index_reading(options.input, layout.format, layout.record_size);
  reading.skip_empty = false;
  reading.ignore_zeros = false;
  return reading;
}

// The records the files take: -n, or where the last split ends. --verify
// checks whole permutations only. (A .npy array with no bytes to move, rows
// of zero bytes included, keeps its header.)
std::uint64_t start_output(const JobOptions& options, const InputLayout& layout, ShardedOutput& output,
                           RunResult& result) {
  const bool tar_samples = layout.syntax.framing == formats::Framing::kTarSample;
  dataset::OutputRecordForm form{layout.framed() ? 0 : layout.record_size,
                                 layout.syntax,
                                 layout.header,
                                 layout.format.kind == formats::RecordKind::kNpy && layout.records > 0,
                                 tar_samples ? std::string(formats::kTarTrailerBytes, '\0') : std::string(),
                                 dataset::IndexReading{}};
  if (options.index) form.index_reading = output_index_reading(options, layout);
  const std::uint64_t wanted = output.start(form, std::min(options.output.head_count, layout.records));
  if (output.records_left_out() > 0) {
    result.warnings.push_back(dataset::left_out_warning(output.records_left_out(), wanted));
  }
  dataset::check_verify_takes_all(options.input.verify, options.output.head_count, layout.records, wanted);
  return wanted;
}

// Whether the output is written unbuffered (O_DIRECT; io/unbuffered_writes.hpp):
// only when EXTSHUFFLE_UNBUFFERED_OUTPUT=1 asks for it, and then only where
// nothing else goes through scratch space during the run (the walk in RAM,
// the input read in place). Measured (docs/benchmarks.md, "Unbuffered
// output in RAM"): in RAM it saved 0-1.1 s of system CPU per GiB of 32-byte
// records and 0.2 s of JSONL, nothing for 8- and 16-byte records, while a
// reader of the output right after paid 2.3-3.5 s per GiB for reading it
// from the disk instead of the page cache: a loss for the common pipeline
// (shuffle, then train), hence not the default. A run through scratch space
// lost with it, its one request in flight queued behind the scratch file's
// writeback (docs/benchmarks.md, "What the profile found").
bool output_unbuffered(const ioperm::Schedule& schedule, std::uint64_t spooled_bytes) {
  const char* asked = std::getenv("EXTSHUFFLE_UNBUFFERED_OUTPUT");
  if (asked == nullptr || std::string(asked) != "1") return false;
  return schedule.nodes_on_disk == 0 && schedule.nodes_in_windows == 0 && spooled_bytes == 0;
}

// Step 5: the shuffle, through the walk for the record layout, each output
// byte digested on its way with --verify. A failed read or a wrong record
// count may come from an input that changed under the run: say so rather
// than what it caused.
ioperm::WalkStats shuffle_into(const JobOptions& options, PreparedInput::State& prepared, std::uint64_t wanted,
                               const ioperm::Schedule& schedule, ShardedOutput& output, RecordDigest& written) {
  io::InputSet& in = prepared.inputs;
  const DatasetInput& dataset = prepared.dataset;
  const InputLayout& layout = dataset.layout;
  try {
    ProgressMeter progress(schedule.bytes_read + schedule.bytes_written, options.run.progress);
    const ioperm::OutputSink sink = [&](const std::byte* data, std::size_t n) {
      if (options.input.verify) {
        if (layout.framed()) {
          dataset::add_text_records(written, data, n, layout.syntax);
        } else {
          written.add_fixed(data, n, layout.record_size);
        }
      }
      output.write(data, n);
    };
    if (layout.framed()) {
      ioperm::TextOptions text = dataset::text_options(options.run, options.input, layout);
      text.walk.output_records = wanted;
      text.walk.progress_bytes = progress.counter();
      text.walk.checkpoint = prepared.checkpoint;
      ioperm::MappedRecords mapped_records{std::move(prepared.mapping.mapped), dataset.mapped};
      return ioperm::shuffle_text(dataset.data, layout.records, layout.text_count.longest_record_bytes, in.scratch(),
                                  in.scratch_offset(), text, sink, mapped_records.mapped ? &mapped_records : nullptr);
    }
    ioperm::WalkOptions walk = dataset::walk_options(options.run, layout);
    walk.output_records = wanted;
    walk.progress_bytes = progress.counter();
    walk.checkpoint = prepared.checkpoint;
    ioperm::MappedRecords mapped_records{std::move(prepared.mapping.mapped), dataset.mapped};
    return ioperm::shuffle_fixed_size(dataset.data, layout.records, in.scratch(), in.scratch_offset(), walk, sink,
                                      mapped_records.mapped ? &mapped_records : nullptr);
  } catch (const std::runtime_error&) {
    in.check_unchanged();
    throw;
  }
}

// What --stats reports of a finished run.
RunStats run_stats(const JobOptions& options, const DatasetInput& dataset, const ioperm::WalkStats& walk,
                   std::uint64_t spooled_bytes) {
  RunStats stats;
  stats.records = dataset.layout.records;
  stats.bytes = dataset.bytes;
  stats.levels = core::plan_levels(dataset.layout.records, options.run.constants);
  stats.passes = walk.passes;
  stats.bytes_read = dataset.counted_bytes + walk.bytes_read;
  stats.bytes_written = spooled_bytes + walk.bytes_written;
  stats.seconds_reading = walk.seconds_reading;
  stats.seconds_shuffling = walk.seconds_shuffling;
  stats.seconds_scattering = walk.seconds_scattering;
  stats.seconds_writing = walk.seconds_writing;
  stats.peak_rss_bytes = peak_rss_bytes();
  stats.huge_page_bytes = walk.huge_page_bytes;
  return stats;
}

// Steps 4-6 of a dataset's run: plan, shuffle the prepared dataset into
// `output` (digesting both sides with --verify), check, commit.
RunResult shuffle_prepared(const JobOptions& options, PreparedInput::State& prepared, ShardedOutput* output) {
  const auto start = std::chrono::steady_clock::now();
  const DatasetInput& dataset = prepared.dataset;
  const InputLayout& layout = dataset.layout;
  core::check_plan(layout.records, options.run.constants);
  const ioperm::Schedule schedule = expected_schedule(options, dataset);
  RunResult result;
  if (options.run.dry_run) {
    // The spool of a compressed input or a pipe is written to scratch
    // space before the walk: it counts among the bytes written.
    const std::uint64_t spooled = prepared.inputs.spooled_bytes();
    ioperm::Schedule described = schedule;
    described.bytes_written += spooled;
    result.stats.bytes_written = spooled;
    result.dry_run_text = describe_schedule(layout, options, described) +
                          describe_scratch(options, spooled, dataset.data.bytes, schedule) +
                          describe_fewer_passes(layout, options, dataset.data.bytes, schedule.passes);
    if (prepared.checkpoint) {
      // DIR holds what -T would, kept until the run succeeds, and the journal.
      const std::uint64_t kept = spooled + (schedule.passes > 1 ? dataset.data.bytes * (schedule.passes - 1) : 0);
      result.dry_run_text += "checkpoint: '" + options.run.checkpoint_dir + "' will hold up to " +
                             std::to_string(kept) +
                             " bytes of scratch space and a journal of a few MiB at most, removed once the run "
                             "succeeds\n" +
                             prepared.checkpoint->describe(layout.records, false);
    }
    return result;
  }
  DatasetCheckpoint* checkpoint = prepared.checkpoint;
  if (checkpoint) {
    // About one chunk a thread between two points of pass 1.
    const std::uint64_t chunk_bytes = static_cast<std::uint64_t>(
        static_cast<unsigned __int128>(dataset.data.bytes) * options.run.constants.leaf_records * options.run.threads /
        std::max<std::uint64_t>(layout.records, 1));
    checkpoint->begin(
        plan_identity(layout.records, dataset.data.bytes, layout.text_count.longest_record_bytes, schedule),
        dataset.data.bytes, chunk_bytes);
  }
  const bool resumed =
      checkpoint && (checkpoint->done() || checkpoint->resume().phase != ioperm::WalkResume::Phase::kStart ||
                     checkpoint->counted_on());
  if (resumed) result.notes.push_back(checkpoint->describe(layout.records, true));
  spdlog::debug("dataset: {} records, {} bytes ({}), {} pass(es) through disk", layout.records, dataset.bytes,
                dataset::format_name(layout.format), schedule.passes);
  // Through disk, the first pass writes every record into buckets in
  // scratch space: refused up front where -T cannot hold even that.
  if (schedule.passes > 1 && options.output.head_count >= layout.records && !resumed) {
    io::check_scratch_room(checkpoint ? options.run.checkpoint_dir : io::scratch_directory(options.run.tmpdir),
                           dataset.data.bytes, "the shuffle");
  }
  if (!checkpoint && output_unbuffered(schedule, prepared.inputs.spooled_bytes())) output->prefer_unbuffered();
  const std::uint64_t wanted = start_output(options, layout, *output, result);
  RecordDigest written;
  // A resumed run: the output continued where the checkpoint left it.
  if (checkpoint) checkpoint->attach(*output, written);
  const ioperm::WalkStats walk = checkpoint && checkpoint->done()
                                     ? ioperm::WalkStats{}
                                     : shuffle_into(options, prepared, wanted, schedule, *output, written);
  // 6. Check; the commit is the Job's: every file of every dataset is complete and fsynced before the first is renamed.
  prepared.inputs.check_unchanged();
  if (options.input.verify) dataset::check_digests(layout.digest, written);
  output->finish();  // committed with the Job's other outputs (JobCommit), which finds the stale pieces
  if (checkpoint) checkpoint->finish();
  result.inputs = dataset.files;
  result.format = dataset::format_name(layout.format);
  for (std::string& note : tar_notes(dataset)) result.notes.push_back(std::move(note));
  for (const std::string& warning : dataset.tar_warnings) result.warnings.push_back(warning);
  result.records_written = wanted;
  result.outputs = output->files();
  result.stats = run_stats(options, dataset, walk, prepared.inputs.spooled_bytes());
  result.stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

// The dataset's inputs, with the checkpoint's scratch file when it has one
// (a dry run writes nothing there).
io::InputSet open_inputs(const JobOptions& options, const JobDataset& dataset, CheckpointSlot checkpoint) {
  const std::vector<std::string> paths = dataset::expand_dataset_paths(dataset.inputs);
  if (!checkpoint.run || options.run.dry_run)
    return io::InputSet(paths, io::scratch_directory(options.run.tmpdir), options.run.memory_bytes);
  return io::InputSet(paths, checkpoint.run->scratch(checkpoint.index), options.run.memory_bytes);
}

}  // namespace

PreparedInput prepare_input(const JobOptions& options, const JobDataset& dataset, CheckpointSlot checkpoint) {
  io::InputSet inputs = open_inputs(options, dataset, checkpoint);
  // One input that may fit in RAM is mapped (text: and counted where it
  // lies, and so read once; InputMapping).
  InputMapping mapping;
  mapping.budget_bytes = options.run.memory_bytes;
  // With a checkpoint, text an earlier run of the same inputs counted is
  // not read to count it again (its counts are the journal's).
  DatasetCheckpoint* part = checkpoint.run ? &checkpoint.run->dataset(checkpoint.index) : nullptr;
  dataset::TextCounts counts;
  if (part) counts.known = part->known_counts();
  if (part && part->count_progress()) counts.partial = *part->count_progress();
  if (part && !options.run.dry_run) {
    counts.on_found = [part](const std::vector<dataset::TextCount>& found) { part->counted_so_far(found); };
    counts.on_progress = [part](std::size_t k, const dataset::TextCountProgress& progress) {
      part->counting(k, progress);
    };
  }
  DatasetInput read =
      dataset::read_dataset(options.input, inputs, options.run.dry_run ? nullptr : &mapping, part ? &counts : nullptr);
  if (part && counts.counted_on) part->count_on();
  if (part) part->counted(std::move(counts.found));
  return PreparedInput(
      std::make_unique<PreparedInput::State>(std::move(inputs), std::move(read), std::move(mapping), part));
}

RunResult run_prepared(const JobOptions& options, PreparedInput input, std::unique_ptr<ShardedOutput> output,
                       JobCommit& commit) {
  RunResult result = shuffle_prepared(options, *input.state_, output.get());
  if (output) commit.add(std::move(output));
  return result;
}

}  // namespace extshuffle::driver
