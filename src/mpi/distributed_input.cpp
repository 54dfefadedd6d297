// Opening and counting the input of a distributed run: what extshuffle-mpi
// refuses, the format, and the split of the top-level chunks among the ranks.
#include "distributed_input.hpp"

#include <sys/stat.h>

#include <chrono>

#include "distribution.hpp"
#include "extshuffle/dataset/input_layout.hpp"
#include "extshuffle/errors.hpp"
#include "extshuffle/formats/format_detection.hpp"
#include "extshuffle/io/compression.hpp"
#include "extshuffle/mpi/rank_failure.hpp"
#include "text_split.hpp"

namespace extshuffle::mpi {
namespace {

const std::byte kTerminators[2] = {std::byte{'\n'}, std::byte{'\0'}};
const char* const kTfrecordReason = "TFRecord frames are found one after another from the start: they cannot be "
                                    "split across ranks (use extshuffle)";
const char* const kTarReason = "tar samples are found one after another from the start: they cannot be split "
                               "across ranks (use extshuffle)";

// What a run split across ranks cannot do: inputs read once in order, output
// that is not a file every rank can write at an offset, and the options whose
// single-machine implementation has no distributed counterpart yet. (Shards,
// splits, compressed pieces and the manifest are the output's:
// piece_plan.hpp.)
void check_supported(const JobOptions& config, const JobDataset& dataset) {
  const std::string& input = dataset.inputs.front();
  const auto refuse = [](const std::string& what, const std::string& why) { throw UsageError(what + ": " + why); };
  if (config.echo || config.integer_range) refuse("-e, -i", "extshuffle-mpi takes no generated input (use extshuffle)");
  if (config.repeat) refuse("--repeat", "extshuffle-mpi shuffles; draws with replacement are extshuffle's (use extshuffle)");
  if (dataset.inputs.size() > 1) {
    refuse("several inputs", "extshuffle-mpi shuffles one input file per output (join them first, or use extshuffle)");
  }
  if (config.format == formats::Format::kTfrecord) refuse("--format tfrecord", kTfrecordReason);
  if (config.format == formats::Format::kTar) refuse("--format tar", kTarReason);
  if (input == "-") refuse("standard input", "cannot be split across ranks: give an INPUT file");
  if (dataset.output == "-") refuse("standard output", "every rank writes its part of the output: give an OUTPUT file");
  if (io::codec_for_path(input) != io::Codec::kNone) {
    refuse("input '" + input + "'", "a compressed input cannot be split across ranks (decompress it first)");
  }
  struct stat st {};
  if (::stat(input.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    refuse("input '" + input + "'",
           "a directory is a dataset of its files, which extshuffle-mpi does not read (use extshuffle)");
  }
  if (::stat(input.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode)) {
    refuse("input '" + input + "'", "a pipe or a device is read once, in order: it cannot be split across ranks");
  }
  if (config.skip_empty) refuse("--skip-empty", "not supported by extshuffle-mpi");
}

}  // namespace

std::uint64_t DistributedInput::State::data_bytes() const {
  if (!text) return records * record_size;
  return source->bytes() - data_offset + (add_terminator && data_offset < source->bytes() ? 1 : 0);
}

io::ByteExtents DistributedInput::State::all_data() const {
  io::ByteExtents data;
  if (!text) {
    data.append({&source->data(), data_offset, records * record_size});
    return data;
  }
  data.append({&source->data(), data_offset, source->bytes() - data_offset});
  if (add_terminator && data_offset < source->bytes()) {
    data.append({nullptr, 0, 1, &kTerminators[syntax.terminator == '\n' ? 0 : 1]});
  }
  return data;
}

io::ByteExtents DistributedInput::State::chunk_data(int rank, const core::PlanConstants& constants) const {
  io::ByteExtents data;
  const std::uint64_t first = chunk_begin[rank], end = chunk_begin[rank + 1];
  if (first == end) return data;
  if (!text) {
    const std::uint64_t first_record = core::chunk_first(first, constants);
    const std::uint64_t end_record = std::min(records, core::chunk_first(end, constants));
    data.append({&source->data(), data_offset + first_record * record_size, (end_record - first_record) * record_size});
    return data;
  }
  data.append({&source->data(), data_begin[rank], data_begin[rank + 1] - data_begin[rank]});
  const std::uint64_t chunks = core::chunk_count(records, constants);
  if (end == chunks && add_terminator) data.append({nullptr, 0, 1, &kTerminators[syntax.terminator == '\n' ? 0 : 1]});
  return data;
}

DistributedInput::DistributedInput(std::unique_ptr<State> state) : state_(std::move(state)) {}
DistributedInput::DistributedInput(DistributedInput&&) noexcept = default;
DistributedInput& DistributedInput::operator=(DistributedInput&&) noexcept = default;
DistributedInput::~DistributedInput() = default;
std::uint64_t DistributedInput::records() const { return state_->records; }

DistributedInput prepare_input(const JobOptions& config, const JobDataset& dataset, Communicator& comm) {
  const std::string& input = dataset.inputs.front();
  const auto start = std::chrono::steady_clock::now();
  auto state = std::make_unique<DistributedInput::State>();
  DistributedInput::State& in = *state;
  const std::string name = "'" + input + "'";
  formats::DetectedFormat detected;
  checkpoint(comm, [&] {
    check_supported(config, dataset);
    in.source = std::make_unique<io::InputSource>(input, io::scratch_directory(config.tmpdir));
    const std::string head = in.source->read_head(formats::kDetectionProbeBytes);
    detected = formats::detect_format(config.format, config.record_size, config.zero_terminated, input,
                                      head, name);
    in.format_name = dataset::format_name(detected);
    if (detected.kind == formats::RecordKind::kText && detected.text_format == formats::Format::kTfrecord) {
      throw UsageError("input " + name + ": " + kTfrecordReason);
    }
    if (detected.kind == formats::RecordKind::kText && detected.text_format == formats::Format::kTar) {
      throw UsageError("input " + name + ": " + kTarReason);
    }
    if (detected.kind == formats::RecordKind::kText) return;
    if (detected.kind != formats::RecordKind::kFixed && detected.kind != formats::RecordKind::kNpy) {
      throw UsageError("input " + name + ": its format is not supported under MPI");
    }
    const dataset::InputLayout layout = dataset::read_input_layout(config, *in.source);
    in.record_size = layout.record_size;
    in.data_offset = layout.data_offset;
    in.records = layout.records;
    in.header = layout.header;
  });
  const std::uint64_t leaf = config.constants.leaf_records;
  if (detected.kind == formats::RecordKind::kText) {
    in.text = true;
    in.syntax = formats::text_syntax(detected.text_format, config.zero_terminated);
    const std::uint64_t header_lines = config.header_lines >= 0 ? static_cast<std::uint64_t>(config.header_lines)
                                                                : formats::default_header_records(detected.text_format);
    checkpoint(comm, [&] {
      const TextSplit split =
          split_text_input(in.source->data(), in.source->bytes(), in.syntax, header_lines, leaf, name, comm);
      in.records = split.records;
      in.data_offset = split.header_bytes;
      in.add_terminator = split.add_terminator;
      in.longest_record_bytes = split.longest_record_bytes;
      in.chunk_begin = split.chunk_begin;
      in.data_begin = split.data_begin;
      // Every rank: its output's offset counts the header's bytes.
      in.header = in.source->read_head(in.data_offset);
      // A file of only a header whose last line lacks its terminator gets one.
      if (in.data_offset == in.source->bytes() && in.add_terminator) in.header += in.syntax.terminator;
    });
  } else {
    in.chunk_begin = even_chunk_split(core::chunk_count(in.records, config.constants), comm.size());
  }
  in.seconds_counting = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return DistributedInput(std::move(state));
}

}  // namespace extshuffle::mpi
