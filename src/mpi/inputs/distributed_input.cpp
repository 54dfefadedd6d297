// Opening and counting the input of a distributed run: what extshuffle-mpi
// refuses, the format, and the split of the top-level chunks among the ranks.
// One plain file (not TFRecord, not tar) is read in place by every rank and
// its text records counted by all of them (text_split.hpp); anything else
// (several files, a directory, compressed files, TFRecord, tar archives,
// whose samples only the rank that indexed them can find) is a dataset of files
// (dataset_files.hpp, staged_input.hpp).
#include "distributed_input.hpp"

#include <sys/stat.h>

#include <chrono>

#include "chunk_readers.hpp"
#include "dataset_cuts.hpp"
#include "distribution.hpp"
#include "extshuffle/dataset/dataset_paths.hpp"
#include "extshuffle/dataset/input_layout.hpp"
#include "extshuffle/errors.hpp"
#include "extshuffle/formats/format_detection.hpp"
#include "extshuffle/io/compression.hpp"
#include "extshuffle/io/input_set.hpp"
#include "extshuffle/io/pseudo_files.hpp"
#include "extshuffle/mpi/rank_failure.hpp"
#include "input_agreement.hpp"
#include "text_split.hpp"

namespace extshuffle::mpi {
namespace {

const std::byte kTerminators[2] = {std::byte{'\n'}, std::byte{'\0'}};

// What a run split across ranks cannot do: inputs read once in order, output
// that is not a file every rank can write at an offset, and the options whose
// single-machine implementation has no distributed counterpart yet. (Shards,
// splits, compressed pieces and the manifest are the output's:
// piece_plan.hpp.)
void check_supported(const JobOptions& options, const JobDataset& dataset) {
  const auto refuse = [](const std::string& what, const std::string& why) { throw UsageError(what + ": " + why); };
  if (options.mode.echo || options.mode.integer_range)
    refuse("-e, -i", "extshuffle-mpi takes no generated input (use extshuffle)");
  if (options.input.repeat)
    refuse("--repeat", "extshuffle-mpi shuffles; draws with replacement are extshuffle's (use extshuffle)");
  for (const std::string& input : dataset.inputs) {
    if (input == "-") refuse("standard input", "cannot be split across ranks: give INPUT files");
  }
  if (dataset.output == "-") refuse("standard output", "every rank writes its part of the output: give an OUTPUT file");
  if (options.input.skip_empty) refuse("--skip-empty", "not supported by extshuffle-mpi");
  if (options.index || options.index_only)
    refuse("--index, --index-only", "not supported by extshuffle-mpi (use extshuffle)");
}

// Each of a dataset's files (a directory expanded) must be one every rank
// can find and its holder read at offsets or decompress.
void check_files(const std::vector<std::string>& paths) {
  for (const std::string& input : paths) {
    struct stat st {};
    if (::stat(input.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode)) {
      throw UsageError("input '" + input + "': a pipe or a device is read once, in order: it cannot be split across ranks");
    }
    // /proc, /sys: made as they are read, so each rank would read other bytes.
    if (S_ISREG(st.st_mode) && !io::readable_in_place(input)) {
      throw UsageError("input '" + input +
                       "': a pseudo file (its size is not its length) is made as it is read: "
                       "each rank would read other bytes (shuffle a copy of it)");
    }
  }
}

}  // namespace

std::uint64_t DistributedInput::State::data_bytes() const {
  if (files) return files->data_bytes;
  if (!framed) return records * record_size;
  return source->bytes() - data_offset + (add_terminator && data_offset < source->bytes() ? 1 : 0);
}

io::ByteExtents DistributedInput::State::chunk_data(int rank, const core::PlanConstants& constants) const {
  io::ByteExtents data;
  const std::uint64_t first = chunk_begin[rank], end = chunk_begin[rank + 1];
  if (first == end) return data;
  // A dataset's chunks are the records it holds (its chunks, by bytes).
  if (files) return rank == this->rank ? held->data : data;
  if (!framed) {
    const std::uint64_t first_record = core::chunk_first(first, constants);
    const std::uint64_t end_record = std::min(records, core::chunk_first(end, constants));
    data.append({&source->data(), data_offset + first_record * record_size, (end_record - first_record) * record_size});
    return data;
  }
  if (read_chunks && rank == this->rank) {
    data = read_chunks->data;
  } else {
    data.append({&source->data(), data_begin[rank], data_begin[rank + 1] - data_begin[rank]});
  }
  const std::uint64_t chunks = core::chunk_count(records, constants);
  if (end == chunks && add_terminator) data.append({nullptr, 0, 1, &kTerminators[syntax.terminator == '\n' ? 0 : 1]});
  return data;
}

std::uint64_t DistributedInput::State::chunk_bytes_read(const io::ByteExtents& chunks) const {
  return chunks.bytes - chunk_bytes_received() + chunk_bytes_sent();
}

std::uint64_t DistributedInput::State::chunk_bytes_sent() const {
  const StagedInput* staged = files ? held.get() : read_chunks.get();
  return staged ? staged->bytes_read_for_others : 0;
}

std::uint64_t DistributedInput::State::chunk_bytes_received() const {
  const StagedInput* staged = files ? held.get() : read_chunks.get();
  return staged ? staged->bytes_from_readers : 0;
}

io::ByteExtents DistributedInput::State::held_data() const {
  if (files) return held->data;
  io::ByteExtents data;
  const std::uint64_t first = held_begin[rank], end = held_begin[rank + 1];
  if (first == end) return data;
  if (!framed) {
    data.append({&source->data(), data_offset + first * record_size, (end - first) * record_size});
    return data;
  }
  data.append({&source->data(), held_byte_begin[rank], held_byte_begin[rank + 1] - held_byte_begin[rank]});
  if (end == records && add_terminator) data.append({nullptr, 0, 1, &kTerminators[syntax.terminator == '\n' ? 0 : 1]});
  return data;
}

io::BlockFile& DistributedInput::State::whole_file() const { return files ? *held->file : source->data(); }
std::uint64_t DistributedInput::State::whole_offset() const { return files ? 0 : data_offset; }

ioperm::TextInput DistributedInput::State::whole_text() const {
  if (files) return ioperm::TextInput{held->file.get(), 0, held->file_bytes, false};
  return ioperm::TextInput{&source->data(), data_offset, source->bytes() - data_offset,
                           add_terminator && data_offset < source->bytes()};
}

io::BlockFile& DistributedInput::State::scratch() const {
  if (!files) return source->scratch();
  return *held->file;
}

std::uint64_t DistributedInput::State::scratch_offset() const {
  if (!files) return source->scratch_offset();
  constexpr std::uint64_t kBlock = 4096;  // the scratch file's regions start on blocks
  const std::uint64_t used = held->file_bytes;
  return (used + kBlock - 1) / kBlock * kBlock;
}

std::uint64_t DistributedInput::State::staged_scratch_bytes() const {
  const StagedInput* staged = files ? held.get() : read_chunks.get();
  std::uint64_t bytes = staged ? staged->file_bytes : 0;
  for (std::size_t k = 0; files && k < files->files.size(); ++k) {
    if (files->held[k] && files->files[k].compressed) bytes += files->files[k].bytes;
  }
  return bytes;
}

std::vector<InputFileInfo> DistributedInput::State::file_infos() const {
  if (!files) return {{source->path(), source->bytes(), records}};
  std::vector<InputFileInfo> infos;
  for (const DatasetFile& file : files->files) infos.push_back({file.path, file.stored_bytes, file.layout.records});
  return infos;
}

void DistributedInput::State::check_unchanged() const {
  if (source) source->check_unchanged();
  if (!files) return;
  for (const auto& opened : files->held) {
    if (opened) opened->check_unchanged();
  }
}

DistributedInput::DistributedInput(std::unique_ptr<State> state) : state_(std::move(state)) {}
DistributedInput::DistributedInput(DistributedInput&&) noexcept = default;
DistributedInput& DistributedInput::operator=(DistributedInput&&) noexcept = default;
DistributedInput::~DistributedInput() = default;
std::uint64_t DistributedInput::records() const { return state_->records; }

namespace {

// Bytes [begin, end) of the one plain file read in place by this rank:
// rank 0 holds it (its bytes are the reference, input_reads.hpp).
void note_read(DistributedInput::State& in, std::uint64_t begin, std::uint64_t end) {
  if (in.rank != 0) in.reads.add(0, in.source->data(), in.source->path(), 0, begin, end);
}

// One plain file, opened in place on every rank. Returns false, the file
// unread, when its framing is not lines (TFRecord frames, tar samples): its
// frames are found one after another from its start, so it is read as a
// dataset of one file by one rank.
bool prepare_one_file(const JobOptions& options, const std::string& input, DistributedInput::State& in,
                      Communicator& comm) {
  const std::string name = dataset::input_display_name(input);
  formats::DetectedFormat detected;
  checkpoint(comm, [&] {
    in.source =
        std::make_unique<io::InputSource>(input, io::scratch_directory(options.run.tmpdir), options.run.memory_bytes);
    const std::string head = in.source->read_head(formats::kDetectionProbeBytes);
    detected = formats::detect_format(options.input.format, options.input.record_size, options.input.zero_terminated,
                                      input, head, name);
    in.format_name = dataset::format_name(detected);
    if (detected.kind == formats::RecordKind::kFramed) return;
    if (detected.kind != formats::RecordKind::kFixed && detected.kind != formats::RecordKind::kNpy) {
      throw UsageError("input " + name + ": its format is not supported under MPI");
    }
    const dataset::InputLayout layout = dataset::read_input_layout(options.input, *in.source);
    in.record_size = layout.record_size;
    in.data_offset = layout.data_offset;
    in.records = layout.records;
    in.header = layout.header;
  });
  check_ranks_see_the_same_format(input, in.format_name, comm);
  if (detected.kind == formats::RecordKind::kFramed && detected.framing() != formats::Framing::kLines) {
    in.source.reset();
    return false;
  }
  in.input_bytes = in.source->bytes();
  // Its head, where the format and the header are found.
  note_read(in, 0, std::max(std::min(in.input_bytes, formats::kDetectionProbeBytes), in.data_offset));
  if (detected.kind != formats::RecordKind::kFramed) {
    in.chunk_begin = even_split(core::chunk_count(in.records, options.run.constants), comm.size());
    return true;
  }
  in.framed = true;
  in.layout_bytes_read =
      range_begin(in.input_bytes, comm.rank() + 1, comm.size()) - range_begin(in.input_bytes, comm.rank(), comm.size());
  in.syntax = formats::framed_syntax(detected.framed_format, options.input.zero_terminated);
  const std::uint64_t header_lines = dataset::header_records(options.input, detected.framed_format);
  checkpoint(comm, [&] {
    const TextSplit split = split_text_input(in.source->data(), in.source->bytes(), in.syntax, header_lines,
                                             options.run.constants, name, comm);
    in.records = split.records;
    in.data_offset = split.header_bytes;
    in.add_terminator = split.add_terminator;
    in.longest_record_bytes = split.longest_record_bytes;
    in.chunk_begin = split.chunk_begin;
    in.data_begin = split.data_begin;
    in.held_begin = split.held_begin;
    in.held_byte_begin = split.held_byte_begin;
    // Every rank: its output's offset counts the header's bytes.
    in.header = in.source->read_head(in.data_offset);
    // A file of only a header whose last line lacks its terminator gets one.
    if (in.data_offset == in.source->bytes() && in.add_terminator) in.header += in.syntax.terminator;
  });
  // Its counting range (text_split.hpp).
  note_read(in, range_begin(in.input_bytes, comm.rank(), comm.size()),
            range_begin(in.input_bytes, comm.rank() + 1, comm.size()));
  if (comm.size() > 1 && !spread_root(in.records, options.run.constants, comm.size())) {
    // Its chunks' bytes read by the ranks in whose 1/P of the data they lie.
    const std::uint64_t data = in.input_bytes - in.data_offset;
    std::vector<std::uint64_t> read(comm.size() + 1);
    for (int s = 0; s <= comm.size(); ++s) read[s] = in.data_offset + range_begin(data, s, comm.size());
    in.read_chunks = std::make_unique<StagedInput>(read_chunks_by_readers(
        in.source->data(), in.data_begin, read, io::scratch_directory(options.run.tmpdir), comm));
    note_read(in, read[comm.rank()], read[comm.rank() + 1]);
  }
  return true;
}

// A dataset of files: laid out by their holders, then each rank's held
// records gathered where it can read them.
void prepare_dataset(const JobOptions& options, const std::vector<std::string>& paths, DistributedInput::State& in,
                     Communicator& comm) {
  const std::string scratch = io::scratch_directory(options.run.tmpdir);
  in.files = std::make_unique<DatasetFiles>(lay_out_dataset(options, paths, scratch, comm));
  const DatasetFiles& d = *in.files;
  const DatasetFile& first = d.files.front();
  in.framed = first.layout.framed();
  in.syntax = first.layout.syntax;
  in.record_size = first.layout.record_size;
  in.records = d.records;
  in.header = d.header;
  in.longest_record_bytes = d.longest_record_bytes;
  in.input_bytes = d.input_bytes;
  in.layout_bytes_read = d.layout_bytes_read;
  in.format_name = dataset::format_name(first.layout.format);
  // A spread root's records are held by bytes, any other's by its chunks,
  // which are shared by bytes.
  // A chunk's bytes are read by the ranks in whose 1/P of the data they
  // lie (read_bytes), and sent to the rank that scatters it.
  std::vector<std::uint64_t> read_bytes;
  if (spread_root(in.records, options.run.constants, comm.size())) {
    in.chunk_begin = even_split(core::chunk_count(in.records, options.run.constants), comm.size());
    HeldSplit split = held_records_by_bytes(*in.files, comm.size(), comm);
    in.held_begin = std::move(split.records);
    in.held_byte_begin = std::move(split.bytes);
  } else {
    HeldSplit split = chunk_split_by_bytes(*in.files, options.run.constants, comm.size(), in.chunk_begin, comm);
    in.held_begin = std::move(split.records);
    in.held_byte_begin = std::move(split.bytes);
    if (comm.size() > 1) read_bytes = std::move(split.read_bytes);
  }
  const std::vector<std::uint64_t>& held_bytes = in.held_byte_begin;
  // A root run alone reads one file range (whole_file, whole_text): its
  // records are copied there, in order, even those it could read in place.
  const bool contiguous = runs_alone(in.records, options.run.constants, comm.size());
  in.held = std::make_unique<StagedInput>(stage_input(*in.files, held_bytes, contiguous, scratch, comm, read_bytes));
  in.reads = std::move(in.held->reads);
}

// One plain file: the bytes of this rank's chunks and held records that it
// reads in place (the others came from their readers, chunk_readers.hpp).
void note_own_reads(DistributedInput::State& in, const core::PlanConstants& constants) {
  if (!in.source) return;
  for (const io::ByteExtents& extents : {in.chunk_data(in.rank, constants), in.held_data()}) {
    for (const io::Extent& e : extents.extents) {
      if (e.file == &in.source->data()) note_read(in, e.offset, e.offset + e.bytes);
    }
  }
}

}  // namespace

DistributedInput prepare_input(const JobOptions& options, const JobDataset& dataset, Communicator& comm) {
  const auto start = std::chrono::steady_clock::now();
  auto state = std::make_unique<DistributedInput::State>();
  DistributedInput::State& in = *state;
  in.rank = comm.rank();
  in.ranks = comm.size();
  std::vector<std::string> paths;
  checkpoint(comm, [&] {
    check_supported(options, dataset);
    paths = dataset::expand_dataset_paths(dataset.inputs);
    check_files(paths);
  });
  check_ranks_see_the_same_inputs(paths, options.run.seed, comm);
  const bool one_plain_file = paths.size() == 1 && io::codec_for_path(paths.front()) == io::Codec::kNone;
  if (!one_plain_file || !prepare_one_file(options, paths.front(), in, comm)) prepare_dataset(options, paths, in, comm);
  if (in.held_begin.empty()) in.held_begin = held_record_split(in.records, options.run.constants, comm.size());
  note_own_reads(in, options.run.constants);
  in.seconds_counting = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return DistributedInput(std::move(state));
}

}  // namespace extshuffle::mpi
