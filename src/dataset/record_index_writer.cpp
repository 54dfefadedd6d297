#include "extshuffle/dataset/record_index_writer.hpp"

#include <algorithm>
#include <bit>
#include <cstring>

#include "extshuffle/errors.hpp"

namespace extshuffle::dataset {
namespace {

static_assert(std::endian::native == std::endian::little, "the index's arrays are written as they lie in memory");

// Values of the streamed array held before they are written: 512 KiB.
constexpr std::size_t kPendingValues = std::size_t{1} << 16;

}  // namespace

RecordIndexWriter::RecordIndexWriter(IndexBytes out, bool spans) : out_(std::move(out)), spans_(spans) {
  std::string preamble(kIndexAlignment, '\0');
  preamble.replace(0, kIndexPreamble.size(), kIndexPreamble);
  write(preamble.data(), preamble.size());
  pending_.reserve(kPendingValues);
}

void RecordIndexWriter::write(const void* data, std::size_t bytes) {
  if (bytes == 0) return;
  out_(data, bytes);
  written_ += bytes;
}

void RecordIndexWriter::pad_to_alignment() {
  static const char kZeros[kIndexAlignment] = {};
  write(kZeros, (kIndexAlignment - written_ % kIndexAlignment) % kIndexAlignment);
}

void RecordIndexWriter::flush_streamed() {
  write(pending_.data(), pending_.size() * sizeof(std::uint64_t));
  pending_.clear();
}

void RecordIndexWriter::record(std::uint64_t begin, std::uint64_t end) {
  if (spans_) {
    pending_.push_back(begin);
    pending_.push_back(end);
  } else {
    if (records_ == 0) {
      pending_.push_back(begin);
    } else if (begin != last_end_) {
      throw Error("internal error: record " + std::to_string(records_) + " of the index starts at byte " +
                  std::to_string(begin) + ", not where the one before ended (" + std::to_string(last_end_) + ")");
    }
    pending_.push_back(end);
  }
  last_end_ = end;
  ++records_;
  if (pending_.size() + 2 > kPendingValues) flush_streamed();
}

void RecordIndexWriter::records(std::uint64_t begin, std::uint64_t base, const std::uint64_t* ends, std::size_t count) {
  if (spans_ || count == 0) {
    RecordSink::records(begin, base, ends, count);
    return;
  }
  record(begin, base + ends[0]);  // checks that it follows the one before
  for (std::size_t k = 1; k < count;) {
    const std::size_t take = std::min(count - k, kPendingValues - pending_.size());
    for (std::size_t j = k; j < k + take; ++j) pending_.push_back(base + ends[j]);
    k += take;
    if (pending_.size() == kPendingValues) flush_streamed();
  }
  records_ += count - 1;
  last_end_ = base + ends[count - 1];
}

void RecordIndexWriter::member(std::uint64_t sample, std::string_view name, std::uint64_t data_offset,
                               std::uint64_t data_bytes) {
  while (member_first_.size() <= sample) member_first_.push_back(members_.size());
  names_.append(name);
  members_.push_back({data_offset, data_bytes, names_.size()});
}

void RecordIndexWriter::write_array(IndexHeader& header, const std::string& name, const std::string& dtype,
                                    std::vector<std::uint64_t> shape, const void* data, std::uint64_t bytes) {
  pad_to_alignment();
  header.arrays[name] = IndexArray{dtype, std::move(shape), written_, bytes};
  write(data, bytes);
}

void RecordIndexWriter::finish_tar(IndexHeader& header, const formats::TarIndex& tar) {
  const std::uint64_t samples = tar.samples();
  if (samples != header.records || member_first_.size() > samples) {
    throw Error("internal error: the index holds members of " + std::to_string(member_first_.size()) +
                " samples, the archive " + std::to_string(samples));
  }
  while (member_first_.size() <= samples) member_first_.push_back(members_.size());
  std::vector<std::uint64_t> ranges;
  ranges.reserve(2 * tar.ranges.size());
  for (const formats::TarRange& range : tar.ranges) {
    ranges.push_back(range.offset);
    ranges.push_back(range.bytes);
  }
  write_array(header, "ranges", "<u8", {tar.ranges.size(), 2}, ranges.data(), 8 * ranges.size());
  write_array(header, "range_first", "<u8", {tar.first_range.size()}, tar.first_range.data(),
              8 * tar.first_range.size());
  write_array(header, "members", "<u8", {members_.size(), 3}, members_.data(), 24 * members_.size());
  write_array(header, "member_first", "<u8", {member_first_.size()}, member_first_.data(), 8 * member_first_.size());
  write_array(header, "names", "|u1", {names_.size()}, names_.data(), names_.size());
}

void RecordIndexWriter::finish(IndexHeader header, const formats::TarIndex* tar) {
  header.arrays.clear();
  if (tar != nullptr) {
    finish_tar(header, *tar);
  } else if (header.reading.record_size == 0) {
    // Lines and frames: the streamed array, which began at kIndexAlignment.
    if (records_ != header.records) {
      throw Error("internal error: the index holds " + std::to_string(records_) + " records, the input " +
                  std::to_string(header.records));
    }
    if (!spans_ && records_ == 0) pending_.push_back(header.data_offset);
    flush_streamed();
    const std::uint64_t values = spans_ ? 2 * records_ : records_ + 1;
    std::vector<std::uint64_t> shape =
        spans_ ? std::vector<std::uint64_t>{records_, 2} : std::vector<std::uint64_t>{records_ + 1};
    header.arrays[spans_ ? "spans" : "offsets"] = IndexArray{"<u8", std::move(shape), kIndexAlignment, 8 * values};
  }
  pad_to_alignment();
  const std::uint64_t header_offset = written_;
  const std::string json = index_header_json(header);
  write(json.data(), json.size());
  write(&header_offset, sizeof header_offset);
  write(kIndexMagic.data(), kIndexMagic.size());
}

}  // namespace extshuffle::dataset
