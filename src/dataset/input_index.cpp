#include "extshuffle/dataset/input_index.hpp"

#include "extshuffle/dataset/index_identity.hpp"
#include "extshuffle/dataset/input_layout.hpp"
#include "extshuffle/io/input_source.hpp"

namespace extshuffle::dataset {
namespace {

// Hands each record on to the index, and publishes how far the pass is
// every kStepBytes of the input (a compare a record otherwise).
class ProgressingSink : public RecordSink {
 public:
  ProgressingSink(RecordSink& index, std::atomic<std::uint64_t>* progress) : index_(index), progress_(progress) {}
  // The pass is over: all of the input's `bytes` passed.
  void finish(std::uint64_t bytes) { publish(bytes); }
  void record(std::uint64_t begin, std::uint64_t end) override {
    index_.record(begin, end);
    passed(end);
  }
  void records(std::uint64_t begin, std::uint64_t base, const std::uint64_t* ends, std::size_t count) override {
    index_.records(begin, base, ends, count);
    if (count > 0) passed(base + ends[count - 1]);
  }
  void member(std::uint64_t sample, std::string_view name, std::uint64_t data_offset,
              std::uint64_t data_bytes) override {
    index_.member(sample, name, data_offset, data_bytes);
    passed(data_offset + data_bytes);
  }

 private:
  static constexpr std::uint64_t kStepBytes = std::uint64_t{4} << 20;
  void passed(std::uint64_t at) {
    if (at >= published_ + kStepBytes) publish(at);
  }
  void publish(std::uint64_t at) {
    if (progress_ != nullptr && at > published_) progress_->fetch_add(at - published_, std::memory_order_relaxed);
    published_ = at;
  }
  RecordSink& index_;
  std::atomic<std::uint64_t>* progress_;
  std::uint64_t published_ = 0;
};

}  // namespace

IndexHeader write_input_index(const DatasetOptions& options, io::InputSource& source, const IndexedFile& facts,
                              const IndexBytes& out, std::atomic<std::uint64_t>* progress_bytes) {
  // Blank records skipped leave gaps: each record its (begin, end).
  RecordIndexWriter writer(out, options.skip_empty);
  ProgressingSink sink(writer, progress_bytes);
  const InputLayout layout = read_input_layout(options, source, nullptr, &sink);
  sink.finish(source.bytes());
  IndexHeader header;
  header.input = facts;
  header.reading = index_reading(options, layout.format, layout.record_size);
  header.records = layout.records;
  header.data_offset = layout.data_offset;
  // The last record lacks its terminator (the CLI adds one) only where it
  // ends the input: a blank line after it, skipped, may be what lacks it.
  header.add_terminator =
      layout.framed() && layout.text_count.add_terminator && layout.records > 0 && writer.last_end() == source.bytes();
  const bool tar = layout.framed() && layout.syntax.framing == formats::Framing::kTarSample;
  writer.finish(header, tar ? layout.tar_index.get() : nullptr);
  return header;
}

}  // namespace extshuffle::dataset
