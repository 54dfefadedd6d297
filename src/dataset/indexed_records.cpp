#include "extshuffle/dataset/indexed_records.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <utility>

#include "extshuffle/errors.hpp"
#include "extshuffle/formats/tar.hpp"
#include "extshuffle/formats/tfrecord.hpp"
#include "input_descriptors.hpp"
#include "record_reads.hpp"

namespace extshuffle::dataset {
namespace {

using Read = ReadPlan::Read;
using Check = ReadPlan::Check;
using CheckKind = ReadPlan::CheckKind;

[[noreturn]] void damaged(const IndexedInput& input, std::uint64_t record, const std::string& why) {
  const std::string where = input.index ? "index '" + input.index->path() + "'" : "input '" + input.path + "'";
  throw InputError(where + ": record " + std::to_string(record) + " " + why +
                   " (a damaged index, or one of another file)");
}

// Where record `record` of a file of lines or frames lies: [begin, end).
std::pair<std::uint64_t, std::uint64_t> framed_record(const IndexedInput& input, std::uint64_t record) {
  const MappedIndex& index = *input.index;
  std::uint64_t begin = 0, end = 0;
  if (!index.spans().empty()) {
    begin = index.spans()[2 * record];
    end = index.spans()[2 * record + 1];
  } else {
    begin = index.offsets()[record];
    end = index.offsets()[record + 1];
  }
  if (begin >= end || end > input.layout.input.bytes || begin < input.layout.data_offset) {
    damaged(input, record,
            "lies at bytes " + std::to_string(begin) + "-" + std::to_string(end) + " of a file of " +
                std::to_string(input.layout.input.bytes));
  }
  return {begin, end};
}

// A tar sample: its ranges laid end to end (raw), or each member's data,
// read with the header block before it for the check.
void plan_tar_sample(const IndexedInput& input, std::uint32_t k, std::uint64_t record, bool raw, ReadPlan& plan) {
  const MappedIndex& index = *input.index;
  const std::uint64_t file_bytes = input.layout.input.bytes;
  const auto segment = static_cast<std::int64_t>(plan.segment_bytes.size());
  if (raw) {
    const std::uint64_t first = index.range_first()[record], last = index.range_first()[record + 1];
    if (first >= last || last > index.ranges().size() / 2) damaged(input, record, "has no byte ranges");
    std::uint64_t bytes = 0;
    for (std::uint64_t r = first; r < last; ++r) {
      const std::uint64_t offset = index.ranges()[2 * r], size = index.ranges()[2 * r + 1];
      if (offset > file_bytes || size > file_bytes - offset) damaged(input, record, "lies past its file's end");
      plan.reads.push_back({k, offset, size, segment, bytes});
      bytes += size;
    }
    if (bytes < formats::kTarBlockBytes) damaged(input, record, "is shorter than a tar header");
    plan.segment_bytes.push_back(bytes);
    plan.checks.push_back({CheckKind::kTarHeader, k, record, index.ranges()[2 * first], segment, 0});
    return;
  }
  const std::uint64_t first = index.member_first()[record], last = index.member_first()[record + 1];
  if (first >= last || last > index.members().size() / 3) damaged(input, record, "has no members");
  for (std::uint64_t m = first; m < last; ++m) {
    const std::uint64_t data = index.members()[3 * m], size = index.members()[3 * m + 1];
    const std::uint64_t name_begin = m == 0 ? 0 : index.members()[3 * m - 1], name_end = index.members()[3 * m + 2];
    if (data < formats::kTarBlockBytes || data > file_bytes || size > file_bytes - data || name_begin > name_end ||
        name_end > index.names().size()) {
      damaged(input, record, "has a member outside its file or its name outside the index");
    }
    const auto member = static_cast<std::int64_t>(plan.segment_bytes.size());
    const std::uint64_t at = std::exchange(plan.scratch_bytes, plan.scratch_bytes + formats::kTarBlockBytes);
    plan.segment_bytes.push_back(size);
    plan.segment_names.resize(plan.segment_bytes.size());
    plan.segment_names.back() = index.names().substr(name_begin, name_end - name_begin);
    plan.reads.push_back({k, data - formats::kTarBlockBytes, formats::kTarBlockBytes, -1, at});
    plan.reads.push_back({k, data, size, member, 0});
    plan.checks.push_back({CheckKind::kTarHeader, k, record, data - formats::kTarBlockBytes, -1, at});
  }
}

}  // namespace

IndexedRecords::IndexedRecords(std::vector<IndexedInput> inputs) : inputs_(std::move(inputs)) {
  first_record_.push_back(0);
  std::vector<std::string> paths;
  std::vector<IndexedFile> files;
  for (const IndexedInput& input : inputs_) {
    first_record_.push_back(first_record_.back() + input.layout.records);
    paths.push_back(input.path);
    files.push_back(input.layout.input);
  }
  descriptors_ = std::make_unique<InputDescriptors>(std::move(paths), std::move(files));
}

IndexedRecords::~IndexedRecords() = default;

ReadPlan IndexedRecords::plan(std::span<const std::uint64_t> indices, RecordForm form) const {
  ReadPlan plan;
  plan.first_segment.reserve(indices.size() + 1);
  plan.first_segment.push_back(0);
  for (const std::uint64_t i : indices) {
    if (i >= size()) {
      throw std::out_of_range("record " + std::to_string(i) + " out of range: the dataset holds " +
                              std::to_string(size()) + " records");
    }
    const auto after = std::upper_bound(first_record_.begin(), first_record_.end(), i);
    const auto input = static_cast<std::uint32_t>(after - first_record_.begin() - 1);
    plan_record(input, i - first_record_[input], form, plan);
    plan.first_segment.push_back(plan.segment_bytes.size());
  }
  return plan;
}

void IndexedRecords::plan_record(std::uint32_t k, std::uint64_t record, RecordForm form, ReadPlan& plan) const {
  const IndexedInput& input = inputs_[k];
  const IndexHeader& layout = input.layout;
  const auto segment = static_cast<std::int64_t>(plan.segment_bytes.size());
  const bool raw = form == RecordForm::kRaw;
  const auto scratch = [&plan](std::uint64_t bytes) {
    return std::exchange(plan.scratch_bytes, plan.scratch_bytes + bytes);
  };
  // Fixed-size records and .npy rows: by arithmetic.
  if (layout.reading.record_size > 0) {
    const std::uint64_t size = layout.reading.record_size;
    plan.segment_bytes.push_back(size);
    plan.reads.push_back({k, layout.data_offset + record * size, size, segment, 0});
    return;
  }
  // A tar sample: its ranges (raw), or each member's data after its header.
  if (layout.reading.format == "tar") {
    plan_tar_sample(input, k, record, raw, plan);
    return;
  }
  const auto [begin, end] = framed_record(input, record);
  if (layout.reading.format == "tfrecord") {
    if (end - begin < formats::kTfrecordOverheadBytes) damaged(input, record, "is shorter than a TFRecord frame");
    if (raw) {
      plan.segment_bytes.push_back(end - begin);
      plan.reads.push_back({k, begin, end - begin, segment, 0});
      plan.checks.push_back({CheckKind::kRawFrame, k, record, begin, segment, 0});
      return;
    }
    const std::uint64_t data = end - begin - formats::kTfrecordOverheadBytes;
    const std::uint64_t at = scratch(formats::kTfrecordOverheadBytes);
    plan.segment_bytes.push_back(data);
    plan.reads.push_back({k, begin, formats::kTfrecordHeaderBytes, -1, at});
    plan.reads.push_back({k, begin + formats::kTfrecordHeaderBytes, data, segment, 0});
    plan.reads.push_back({k, end - formats::kTfrecordFooterBytes, formats::kTfrecordFooterBytes, -1,
                          at + formats::kTfrecordHeaderBytes});
    plan.checks.push_back({CheckKind::kFrame, k, record, begin, segment, at});
    return;
  }
  // Lines: the last may lack its terminator (it gets one, as the CLI writes it).
  const bool unterminated = layout.add_terminator && record + 1 == layout.records;
  if (raw) {
    plan.segment_bytes.push_back(end - begin + (unterminated ? 1 : 0));
    plan.reads.push_back({k, begin, end - begin, segment, 0});
    plan.checks.push_back(
        {unterminated ? CheckKind::kAddTerminator : CheckKind::kRawTerminator, k, record, begin, segment, 0});
    return;
  }
  const std::uint64_t bytes = end - begin - (unterminated ? 0 : 1);
  plan.segment_bytes.push_back(bytes);
  plan.reads.push_back({k, begin, bytes, segment, 0});
  if (!unterminated) {
    const std::uint64_t at = scratch(1);
    plan.reads.push_back({k, end - 1, 1, -1, at});
    plan.checks.push_back({CheckKind::kTerminator, k, record, begin, segment, at});
  }
}

void IndexedRecords::read(const ReadPlan& plan, std::span<std::byte* const> targets) const {
  std::vector<std::byte> scratch(plan.scratch_bytes);
  std::vector<const Read*> order;
  order.reserve(plan.reads.size());
  for (const Read& read : plan.reads) order.push_back(&read);
  std::sort(order.begin(), order.end(), [](const Read* a, const Read* b) {
    return a->input != b->input ? a->input < b->input : a->offset < b->offset;
  });
  // Each input's reads in runs of neighbours, one preadv a run.
  for (std::size_t first = 0; first < order.size();) {
    const std::uint32_t k = order[first]->input;
    std::size_t last = first;
    while (last < order.size() && order[last]->input == k) ++last;
    const std::shared_ptr<InputDescriptor> file = descriptors_->get(k);
    read_runs(file->fd(), inputs_[k].path, std::span(order).subspan(first, last - first), targets, scratch.data());
    first = last;
  }
  for (const Check& c : plan.checks) check_read(inputs_[c.input], c, plan, targets, scratch.data());
}

}  // namespace extshuffle::dataset
