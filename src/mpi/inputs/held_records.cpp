#include "held_records.hpp"

#include <stdexcept>

namespace extshuffle::mpi {

HeldRecords::HeldRecords(const io::ByteExtents& data, std::uint64_t first, std::uint64_t end, std::size_t record_size,
                         const formats::RecordSyntax& syntax, const std::string& display_name)
    : first_(first), end_(end), record_size_(record_size), size_(data.bytes) {
  // One range of the input file, and at most the one terminator the last
  // record lacks: mapped, the terminator in the mapping's own byte after it.
  const std::vector<io::Extent>& e = data.extents;
  const bool one_file_range = !e.empty() && e[0].file != nullptr && e[0].file->descriptor() >= 0 &&
                              (e.size() == 1 || (e.size() == 2 && e[1].file == nullptr && e[1].bytes == 1));
  if (one_file_range) mapped_ = io::MappedBytes::map(*e[0].file, e[0].offset, e[0].bytes, display_name);
  if (mapped_) {
    if (e.size() == 2) mapped_->after() = *e[1].memory;
    bytes_ = mapped_->data();
  } else if (size_ > 0) {
    copy_.resize(size_);
    io::ExtentReader reader(data);
    if (reader.read_now(copy_.data(), size_) != size_) throw std::logic_error("held records: a short read");
    bytes_ = copy_.data();
  }
  if (record_size_ == 0) index_text(syntax);
}

void HeldRecords::index_text(const formats::RecordSyntax& syntax) {
  if (mapped_) mapped_->expect_sequential(true);
  starts_.reserve(end_ - first_ + 1);
  const auto* text = reinterpret_cast<const char*>(bytes_);
  const char* p = text;
  for (std::uint64_t k = first_; k < end_; ++k) {
    starts_.push_back(static_cast<std::uint64_t>(p - text));
    formats::QuoteState state = formats::QuoteState::kFieldStart;  // every held record starts a record
    // A TFRecord frame ends where its length field says, not at a terminator.
    const char* record_end = syntax.framing == formats::Framing::kLines
                                 ? formats::find_record_end(p, text + size_, syntax, state)
                                 : formats::scan_record(p, text + size_, syntax).end;
    p = record_end ? record_end : text + size_;
  }
  starts_.push_back(static_cast<std::uint64_t>(p - text));
  if (starts_.back() != size_) throw std::logic_error("held records: the held bytes hold other records than counted");
  input_bytes_read_ = size_;
  if (mapped_) mapped_->expect_sequential(false);
}

const std::byte* HeldRecords::record(std::uint64_t record) const {
  const std::uint64_t k = record - first_;
  return bytes_ + (record_size_ > 0 ? k * record_size_ : starts_[k]);
}

std::uint64_t HeldRecords::record_bytes(std::uint64_t record) const {
  if (record_size_ > 0) return record_size_;
  const std::uint64_t k = record - first_;
  return starts_[k + 1] - starts_[k];
}

}  // namespace extshuffle::mpi
