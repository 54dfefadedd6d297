#include "checkpoint_records.hpp"

#include <cstring>

#include "extshuffle/errors.hpp"

namespace extshuffle::driver {
namespace {

using Phase = ioperm::WalkResume::Phase;

// Ranks of what a dataset's records say: a later record of a lower rank
// does not undo a higher one (the journal keeps one record of each kind
// when it is rewritten, in the order the kinds first came).
int rank_of(CheckpointRecord type) {
  switch (type) {
    case CheckpointRecord::kScattered: return 1;
    case CheckpointRecord::kScatterDone: return 2;
    case CheckpointRecord::kEmitted: return 3;
    case CheckpointRecord::kDone: return 4;
    default: return 0;
  }
}

void put_split(io::FieldWriter& out, const io::SplitState& state) {
  out.u64(state.base);
  out.u64(state.overflow_top);
  out.u64(state.streams.size());
  for (const io::StoredStream& s : state.streams) {
    out.u64(s.bytes);
    out.u64(s.crc32c);
    out.u64(s.extents.size());
    for (const auto& [offset, bytes] : s.extents) {
      out.u64(offset);
      out.u64(bytes);
    }
  }
}

io::SplitState take_split(io::FieldReader& in) {
  io::SplitState state;
  state.base = in.u64();
  state.overflow_top = in.u64();
  const std::uint64_t streams = in.u64();
  if (streams > (std::uint64_t{1} << 32)) throw Error("checkpoint journal: a record is not this run's: not trusted");
  state.streams.resize(streams);
  for (io::StoredStream& s : state.streams) {
    s.bytes = in.u64();
    s.crc32c = static_cast<std::uint32_t>(in.u64());
    const std::uint64_t extents = in.u64();
    if (extents > (std::uint64_t{1} << 32)) throw Error("checkpoint journal: a record is not this run's: not trusted");
    for (std::uint64_t e = 0; e < extents; ++e) {
      const std::uint64_t offset = in.u64();
      s.extents.emplace_back(offset, in.u64());
    }
  }
  return state;
}

// A double kept to the bit.
double take_double(io::FieldReader& in) {
  const std::uint64_t bits = in.u64();
  double value = 0;
  std::memcpy(&value, &bits, sizeof bits);
  return value;
}

void put_double(io::FieldWriter& out, double value) {
  std::uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  out.u64(bits);
}

dataset::TextCount take_count(io::FieldReader& in) {
  dataset::TextCount c;
  c.header_bytes = in.u64();
  c.records = in.u64();
  c.add_terminator = in.u64() != 0;
  c.longest_record_bytes = in.u64();
  c.record_bytes_squared = take_double(in);
  return c;
}

void put_count(io::FieldWriter& out, const dataset::TextCount& c) {
  out.u64(c.header_bytes);
  out.u64(c.records);
  out.u64(c.add_terminator ? 1 : 0);
  out.u64(c.longest_record_bytes);
  put_double(out, c.record_bytes_squared);
}

std::vector<dataset::TextCount> take_counts(io::FieldReader& in) {
  const std::uint64_t inputs = in.u64();
  if (inputs > (std::uint64_t{1} << 32)) throw Error("checkpoint journal: a record is not this run's: not trusted");
  std::vector<dataset::TextCount> counts(inputs);
  for (dataset::TextCount& c : counts) c = take_count(in);
  return counts;
}

void take_count_progress(io::FieldReader& in, DatasetJournal& d) {
  d.counting_input = static_cast<std::size_t>(in.u64());
  dataset::TextCountProgress p;
  p.through = in.u64();
  p.before = take_count(in);
  p.records = in.u64();
  p.longest_record_bytes = in.u64();
  p.open_bytes = in.u64();
  p.record_bytes_squared = take_double(in);
  p.last_byte = static_cast<char>(in.u64());
  p.by_records = !in.done() && in.u64() != 0;  // absent in a journal of before 2026-12-03: bulk
  d.count_progress = p;
}

// A record's dataset part, read into `d`.
void take_record(CheckpointRecord type, io::FieldReader& in, DatasetJournal& d) {
  switch (type) {
    case CheckpointRecord::kPlan: d.plan = in.bytes(); return;
    case CheckpointRecord::kCounts: d.counts = take_counts(in); return;
    case CheckpointRecord::kCountProgress: take_count_progress(in, d); return;
    case CheckpointRecord::kScattered:
      d.resume = {};
      d.resume.phase = Phase::kScatter;
      d.resume.next_record = in.u64();
      d.resume.data_offset = in.u64();
      d.resume.buckets = take_split(in);
      return;
    case CheckpointRecord::kScatterDone:
      d.resume = {};
      d.resume.phase = Phase::kBuckets;
      d.resume.buckets = take_split(in);
      d.output_state.clear();
      d.written_state.clear();
      return;
    case CheckpointRecord::kEmitted:
      d.resume.phase = Phase::kBuckets;
      d.resume.destinations_done = in.u64();
      d.resume.records_emitted = in.u64();
      d.output_state = in.bytes();
      d.written_state = in.bytes();
      return;
    case CheckpointRecord::kDone:
      d.output_state = in.bytes();
      d.written_state = in.bytes();
      d.done = true;
      return;
    default: throw Error("checkpoint journal: a record of an unknown kind: not trusted");
  }
}

}  // namespace

JournalState read_journal_state(const std::vector<io::JournalRecord>& records) {
  JournalState state;
  std::vector<int> reached;
  for (const io::JournalRecord& r : records) {
    const auto type = static_cast<CheckpointRecord>(r.type);
    if (type == CheckpointRecord::kIdentity) {
      state.identity = r.payload;
      continue;
    }
    if (state.identity.empty()) throw Error("checkpoint journal: records before the run's identity: not trusted");
    io::FieldReader in(r.payload);
    const std::uint64_t k = in.u64();
    if (k >= 1 << 20) throw Error("checkpoint journal: a record is not this run's: not trusted");
    if (k >= state.datasets.size()) {
      state.datasets.resize(k + 1);
      reached.resize(k + 1, 0);
    }
    if (rank_of(type) < reached[k] && type != CheckpointRecord::kPlan && type != CheckpointRecord::kCounts) continue;
    if (type == CheckpointRecord::kEmitted && reached[k] < rank_of(CheckpointRecord::kScatterDone)) {
      throw Error("checkpoint journal: a point of pass 2 before the scatter's end: not trusted");
    }
    take_record(type, in, state.datasets[k]);
    reached[k] = std::max(reached[k], rank_of(type));
  }
  return state;
}

std::string plan_record(std::size_t dataset, const std::string& plan) {
  io::FieldWriter out;
  out.u64(dataset);
  out.bytes(plan);
  return out.text();
}

std::string counts_record(std::size_t dataset, const std::vector<dataset::TextCount>& counts) {
  io::FieldWriter out;
  out.u64(dataset);
  out.u64(counts.size());
  for (const dataset::TextCount& c : counts) put_count(out, c);
  return out.text();
}

std::string count_progress_record(std::size_t dataset, std::size_t input, const dataset::TextCountProgress& progress) {
  io::FieldWriter out;
  out.u64(dataset);
  out.u64(input);
  out.u64(progress.through);
  put_count(out, progress.before);
  out.u64(progress.records);
  out.u64(progress.longest_record_bytes);
  out.u64(progress.open_bytes);
  put_double(out, progress.record_bytes_squared);
  out.u64(static_cast<unsigned char>(progress.last_byte));
  out.u64(progress.by_records ? 1 : 0);
  return out.text();
}

std::string scattered_record(std::size_t dataset, const ioperm::WalkResume& point) {
  io::FieldWriter out;
  out.u64(dataset);
  out.u64(point.next_record);
  out.u64(point.data_offset);
  put_split(out, point.buckets);
  return out.text();
}

std::string scatter_done_record(std::size_t dataset, const io::SplitState& buckets) {
  io::FieldWriter out;
  out.u64(dataset);
  put_split(out, buckets);
  return out.text();
}

std::string emitted_record(std::size_t dataset, const ioperm::WalkResume& point, const std::string& output_state,
                           const std::string& written_state) {
  io::FieldWriter out;
  out.u64(dataset);
  out.u64(point.destinations_done);
  out.u64(point.records_emitted);
  out.bytes(output_state);
  out.bytes(written_state);
  return out.text();
}

std::string done_record(std::size_t dataset, const std::string& output_state, const std::string& written_state) {
  io::FieldWriter out;
  out.u64(dataset);
  out.bytes(output_state);
  out.bytes(written_state);
  return out.text();
}

}  // namespace extshuffle::driver
