#include "extshuffle/dataset/record_cutter.hpp"

#include <algorithm>
#include <array>

#include "extshuffle/dataset/text_input.hpp"
#include "extshuffle/formats/tar.hpp"
#include "extshuffle/formats/terminator_scan.hpp"
#include "extshuffle/formats/text_scan.hpp"

namespace extshuffle::dataset {
namespace {

// Record ends are located in batches of this many (a small array on the stack).
constexpr std::size_t kBatchRecords = 1024;

// The end of the record at `at` (one past it); `end` when the bytes end
// without one (cannot happen for whole records: the rest counts as one).
const char* record_end(const char* at, const char* end, const formats::RecordSyntax& syntax) {
  const char* stop = formats::scan_record(at, end, syntax).end;
  return stop ? stop : end;
}

}  // namespace

RecordCutter::RecordCutter(std::size_t record_size, const formats::RecordSyntax& syntax)
    : record_size_(record_size), syntax_(syntax),
      plain_terminators_(formats::TextScan{syntax, false}.plain_terminators()) {}

RecordCutter::Cut RecordCutter::take_records(const std::byte* data, std::size_t bytes, std::uint64_t records) const {
  if (record_size_ > 0) {
    const std::uint64_t take = std::min<std::uint64_t>(records, bytes / record_size_);
    return {static_cast<std::size_t>(take * record_size_), take};
  }
  const char* begin = reinterpret_cast<const char*>(data);
  const char* end = begin + bytes;
  if (plain_terminators_) {
    // Whole records end with their terminator: counting them counts records.
    const std::uint64_t all = formats::count_terminators(begin, end, syntax_.terminator);
    if (all <= records) return {bytes, all};
    Cut cut;
    std::array<std::uint64_t, kBatchRecords> ends{};
    while (cut.records < records) {
      const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(kBatchRecords, records - cut.records));
      const std::size_t found = formats::find_record_ends(begin + cut.bytes, end, syntax_.terminator, want, ends.data());
      if (found == 0) break;  // cannot happen: more than `records` terminators were counted
      cut.bytes += static_cast<std::size_t>(ends[found - 1]);
      cut.records += found;
    }
    return cut;
  }
  Cut cut;
  for (const char* at = begin; at < end && cut.records < records; ++cut.records) {
    at = record_end(at, end, syntax_);
    cut.bytes = static_cast<std::size_t>(at - begin);
  }
  return cut;
}

RecordCutter::Cut RecordCutter::take_bytes(const std::byte* data, std::size_t bytes, std::uint64_t max_bytes,
                                           bool at_least_one) const {
  if (record_size_ > 0) {
    std::uint64_t take = std::min<std::uint64_t>(max_bytes / record_size_, bytes / record_size_);
    if (take == 0 && at_least_one && bytes >= record_size_) take = 1;
    return {static_cast<std::size_t>(take * record_size_), take};
  }
  const char* begin = reinterpret_cast<const char*>(data);
  const char* end = begin + bytes;
  Cut cut;
  if (plain_terminators_) {
    std::array<std::uint64_t, kBatchRecords> ends{};
    for (;;) {
      const std::size_t base = cut.bytes;
      const std::size_t found =
          formats::find_record_ends(begin + base, end, syntax_.terminator, kBatchRecords, ends.data());
      if (found == 0) return cut;
      for (std::size_t k = 0; k < found; ++k) {
        const std::uint64_t after = base + ends[k];
        if (after > max_bytes && !(at_least_one && cut.records == 0)) return cut;
        cut.bytes = static_cast<std::size_t>(after);
        ++cut.records;
      }
    }
  }
  // Tar samples: the frames' prefixes are not written, so not counted.
  const std::uint64_t prefix = syntax_.framing == formats::Framing::kTarSample ? formats::kTarFrameBytes : 0;
  for (const char* at = begin; at < end;) {
    const char* next = record_end(at, end, syntax_);
    const auto after = static_cast<std::uint64_t>(next - begin) - prefix * (cut.records + 1);
    if (after > max_bytes && !(at_least_one && cut.records == 0)) break;
    cut.bytes = static_cast<std::size_t>(next - begin);
    ++cut.records;
    at = next;
  }
  return cut;
}

void RecordCutter::hand_records(const std::byte* data, std::size_t bytes, std::uint64_t base, RecordSink& sink) const {
  const char* begin = reinterpret_cast<const char*>(data);
  const char* end = begin + bytes;
  if (record_size_ > 0) {
    for (std::size_t at = 0; at + record_size_ <= bytes; at += record_size_)
      sink.record(base + at, base + at + record_size_);
    return;
  }
  std::size_t at = 0;
  if (plain_terminators_) {
    std::array<std::uint64_t, kBatchRecords> ends{};
    for (;;) {
      const std::size_t found =
          formats::find_record_ends(begin + at, end, syntax_.terminator, kBatchRecords, ends.data());
      if (found == 0) return;
      sink.records(base + at, base + at, ends.data(), found);
      at += static_cast<std::size_t>(ends[found - 1]);
      if (found < kBatchRecords) return;
    }
  }
  while (begin + at < end) {
    const auto next = static_cast<std::size_t>(record_end(begin + at, end, syntax_) - begin);
    sink.record(base + at, base + next);
    at = next;
  }
}

std::uint64_t RecordCutter::written_bytes(const Cut& cut) const {
  const std::uint64_t prefix = syntax_.framing == formats::Framing::kTarSample ? formats::kTarFrameBytes : 0;
  return cut.bytes - prefix * cut.records;
}

}  // namespace extshuffle::dataset
