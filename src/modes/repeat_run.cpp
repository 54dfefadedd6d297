#include "repeat_run.hpp"

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <tuple>

#include "extshuffle/core/stream.hpp"
#include "extshuffle/errors.hpp"
#include "extshuffle/formats/npy_layout.hpp"
#include "extshuffle/io/aligned_buffer.hpp"
#include "extshuffle/io/compression.hpp"
#include "extshuffle/io/input_source.hpp"
#include "extshuffle/io/output_file.hpp"
#include "generated_run.hpp"
#include "extshuffle/dataset/input_layout.hpp"
#include "text_record_index.hpp"

namespace extshuffle::modes {

using dataset::InputLayout;
using dataset::read_input_layout;
namespace {

// The output of a repeat run (a stream: ShardedOutput::start_stream()),
// small records staged into pieces of about 1 MiB.
class RepeatOutput {
 public:
  explicit RepeatOutput(dataset::ShardedOutput& output) : output_(output) {}
  void write(const char* data, std::size_t bytes) {
    if (staged_.size() + bytes > kStageBytes) flush();
    if (bytes >= kStageBytes) {
      output_.write_stream(data, bytes);
    } else {
      staged_.append(data, bytes);
    }
  }
  void flush() {
    output_.write_stream(staged_.data(), staged_.size());
    staged_.clear();
  }

 private:
  static constexpr std::size_t kStageBytes = std::size_t{1} << 20;
  dataset::ShardedOutput& output_;
  std::string staged_;
};

bool endless(const ModeSlices& options) { return options.output.head_count == UINT64_MAX; }

// Records of an input, fetched by number: from RAM when the data fit in
// half of --memory (and, for text, the index in a quarter), else one read
// each from the input (or its spool).
class RecordFetcher {
 public:
  RecordFetcher(const ModeSlices& options, io::InputSource& source, const InputLayout& layout)
      : source_(source), layout_(layout), budget_(options.run.memory_bytes), skip_blank_(options.input.skip_empty) {
    const std::uint64_t data_bytes = source.bytes() - layout.data_offset;
    if (layout.framed()) {
      index_ = std::make_unique<TextRecordIndex>(source.data(), layout.data_offset, data_bytes, layout.records,
                                                 layout.syntax, options.input.skip_empty, budget_ / 4, source.scratch(),
                                                 source.scratch_offset());
    }
    if (data_bytes <= budget_ / 2 && (!index_ || index_->in_memory())) {
      data_ = io::allocate_aligned(std::max<std::uint64_t>(data_bytes, 1));
      source.data().read_now(data_.get(), layout.data_offset, data_bytes);
      in_memory_ = true;
    }
  }

  // Writes record k to `out` (a text record with its terminator).
  void emit(std::uint64_t k, RepeatOutput& out) {
    std::uint64_t begin = 0, end = 0;
    if (index_) {
      std::tie(begin, end) = index_->span(k);
    } else {
      begin = layout_.data_offset + k * layout_.record_size;
      end = begin + layout_.record_size;
    }
    const char* bytes = fetch(begin, end - begin);
    std::size_t length = static_cast<std::size_t>(end - begin);
    if (!index_) {
      out.write(bytes, length);
      return;
    }
    const formats::RecordSyntax& syntax = layout_.syntax;
    if (skip_blank_) {  // the span may hold blank records after this one
      const char* stop = formats::scan_record(bytes, bytes + length, syntax).end;
      if (stop) length = static_cast<std::size_t>(stop - bytes);
    }
    out.write(bytes, length);
    // The input's last record may lack its terminator: it gets one, as in a shuffle.
    if (syntax.framing == formats::Framing::kLines && (length == 0 || bytes[length - 1] != syntax.terminator)) {
      out.write(&syntax.terminator, 1);
    }
  }

 private:
  const char* fetch(std::uint64_t offset, std::uint64_t bytes) {
    if (in_memory_) return reinterpret_cast<const char*>(data_.get()) + (offset - layout_.data_offset);
    if (bytes > budget_ / 2) {
      throw InputError("a record of " + std::to_string(bytes) + " bytes does not fit in what --memory " +
                       std::to_string(budget_) + " leaves for one record: raise --memory");
    }
    if (buffer_bytes_ < bytes) {
      buffer_ = io::allocate_aligned(bytes);
      buffer_bytes_ = bytes;
    }
    if (bytes > 0) source_.data().read_now(buffer_.get(), offset, bytes);
    return reinterpret_cast<const char*>(buffer_.get());
  }

  io::InputSource& source_;
  const InputLayout& layout_;
  std::uint64_t budget_;
  bool skip_blank_;
  std::unique_ptr<TextRecordIndex> index_;
  io::AlignedBuffer data_;
  bool in_memory_ = false;
  io::AlignedBuffer buffer_;  // one record read from the input
  std::uint64_t buffer_bytes_ = 0;
};

// -e ARG... and -i LO-HI: draw j prints the item repeat_draw() names.
RunStats repeat_generated(const ModeSlices& options, dataset::ShardedOutput& output) {
  const bool empty = ItemPrinter::empty(options);
  if (empty && options.output.head_count > 0) {
    throw InputError(options.mode.echo ? "-e: no items to repeat" : "-i: an empty range has no numbers to repeat");
  }
  ItemPrinter printer(options, output);
  const std::uint64_t last_index = empty ? 0 : ItemPrinter::last_index(options);
  for (std::uint64_t j = 0; endless(options) || j < options.output.head_count; ++j) {
    printer.print(repeat_draw(options.run.seed, j, last_index));
  }
  printer.flush();
  RunStats stats;
  stats.records = empty ? 0 : last_index + 1;
  return stats;
}

}  // namespace

std::uint64_t repeat_draw(std::uint64_t seed, std::uint64_t j, std::uint64_t last_index) {
  core::Stream stream(seed, core::sequence_address(core::Purpose::kRepeatDraw, j));
  return last_index == UINT64_MAX ? stream.next_u64() : stream.next_below(last_index + 1);
}

RunStats run_repeat(const ModeSlices& options, const std::string& input, dataset::ShardedOutput& output,
                    InputDescription& described) {
  if (options.mode.echo || options.mode.integer_range) return repeat_generated(options, output);
  // 1. The output is open (the caller's, so that a bad destination failed
  //    before any work); the input, its format and its records.
  RepeatOutput out(output);
  io::InputSource source(input, io::scratch_directory(options.run.tmpdir));
  const InputLayout layout = read_input_layout(options.input, source);
  const std::string name = dataset::input_display_name(input);
  const bool npy = !layout.framed() && !layout.header.empty();
  if (npy && endless(options)) {
    throw UsageError("--repeat on a .npy array needs -n K: its header must give the row count");
  }
  if (layout.records == 0 && options.output.head_count > 0)
    throw InputError("input " + name + ": no records to repeat");
  // 2. The header once (a .npy's now says K rows), then the draws.
  const std::string header =
      npy ? formats::npy_header_with_rows(layout.header, options.output.head_count, name) : layout.header;
  out.write(header.data(), header.size());
  if (options.output.head_count > 0) {
    RecordFetcher records(options, source, layout);
    for (std::uint64_t j = 0; endless(options) || j < options.output.head_count; ++j) {
      records.emit(repeat_draw(options.run.seed, j, layout.records - 1), out);
    }
  }
  // 3. Check; the caller commits.
  out.flush();
  source.check_unchanged();
  described.inputs = {{source.path(), source.stored_bytes(), layout.records}};
  described.format = dataset::format_name(layout.format);
  RunStats stats;
  stats.records = layout.records;
  stats.bytes = source.bytes();
  return stats;
}

}  // namespace extshuffle::modes
