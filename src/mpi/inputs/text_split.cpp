#include "text_split.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <stdexcept>

#include "extshuffle/errors.hpp"
#include "extshuffle/formats/terminator_scan.hpp"
#include "extshuffle/io/aligned_buffer.hpp"
#include "extshuffle/io/block_file.hpp"
#include "distribution.hpp"

namespace extshuffle::mpi {
namespace {

using formats::QuoteState;

constexpr std::uint64_t kNone = UINT64_MAX;
constexpr int kStates = 4;  // the values of formats::QuoteState

// What a rank's range holds when the scan enters it in one quoting state
// (every rank's goes to every rank).
struct RangeCount {
  std::uint64_t starts = 0;           // records that start in the range (after a record's end, before the input's)
  std::uint64_t first_start = kNone;  // the byte offsets of the first and the last of them
  std::uint64_t last_start = kNone;
  std::uint64_t first_end = kNone;    // the first and the last record end (one past a terminator) in the range
  std::uint64_t last_end = kNone;
  std::uint64_t state_at_end = 0;     // the QuoteState where the range ends
};
using RangeScan = std::array<RangeCount, kStates>;

// The lengths of the records that both start and end in a range (those
// between two of its record ends), kept for this rank alone: the first
// `header_records` one by one (which of them are the input's header is
// known only once every rank's count is), the rest as their longest and
// the sum of their squares.
class RecordLengths {
 public:
  explicit RecordLengths(std::uint64_t header_records) : header_records_(header_records) {}
  void add(std::uint64_t length) {
    if (first_.size() < header_records_) {
      first_.push_back(length);
      return;
    }
    longest_ = std::max(longest_, length);
    squares_ += static_cast<double>(length) * static_cast<double>(length);
  }
  // The longest and the squares of all but the first `skip` (<= header_records) records.
  void add_after(std::uint64_t skip, std::uint64_t& longest, double& squares) const {
    for (std::size_t k = static_cast<std::size_t>(std::min<std::uint64_t>(skip, first_.size())); k < first_.size(); ++k) {
      longest = std::max(longest, first_[k]);
      squares += static_cast<double>(first_[k]) * static_cast<double>(first_[k]);
    }
    longest = std::max(longest, longest_);
    squares += squares_;
  }

 private:
  std::uint64_t header_records_;
  std::vector<std::uint64_t> first_;
  std::uint64_t longest_ = 0;
  double squares_ = 0;
};

// A scan of a range from one entry state: its count and its records' lengths.
struct RangeRecords {
  RangeCount count;
  RecordLengths lengths;
  // A record ends at byte offset `at` (one past its terminator): a record
  // starts there unless the input ends there.
  void note_end(std::uint64_t at, std::uint64_t input_bytes) {
    if (count.last_end != kNone) lengths.add(at - count.last_end);
    if (count.first_end == kNone) count.first_end = at;
    count.last_end = at;
    if (at >= input_bytes) return;
    ++count.starts;
    if (count.first_start == kNone) count.first_start = at;
    count.last_start = at;
  }
};

// Lines, TSV, JSONL: every terminator ends a record; found in bulk.
void scan_plain(io::BlockFile& file, std::uint64_t begin, std::uint64_t end, std::uint64_t input_bytes,
                char terminator, std::size_t piece_bytes, RangeRecords& range) {
  constexpr std::size_t kBlock = 65536;
  std::vector<std::uint64_t> ends(kBlock);
  std::uint64_t position = begin;
  io::read_sequentially(file, begin, end - begin, piece_bytes, [&](const std::byte* data, std::size_t size) {
    const auto* text = reinterpret_cast<const char*>(data);
    for (const char* at = text;;) {
      const std::size_t found = formats::find_record_ends(at, text + size, terminator, kBlock, ends.data());
      const std::uint64_t offset = position + static_cast<std::uint64_t>(at - text);
      for (std::size_t k = 0; k < found; ++k) range.note_end(offset + ends[k], input_bytes);
      if (found < kBlock) break;
      at += ends[found - 1];
    }
    position += size;
  });
}

// CSV: one scan per quoting state the range may start in, over each piece
// in turn. Two scans in the same state at the end of a piece find the same
// record ends from then on: the later one stops scanning, and the earlier
// one notes each end it finds for both (each keeps its own count and
// lengths, since the record that joins their paths differs).
void scan_quoted(io::BlockFile& file, std::uint64_t begin, std::uint64_t end, std::uint64_t input_bytes,
                 const formats::RecordSyntax& syntax, std::size_t piece_bytes, std::vector<RangeRecords>& ranges) {
  std::array<QuoteState, kStates> state;
  // The scans that take each scan's record ends (itself first); empty once it has stopped.
  std::array<std::vector<int>, kStates> takers;
  for (int s = 0; s < kStates; ++s) {
    state[s] = static_cast<QuoteState>(s);
    takers[s] = {s};
  }
  std::uint64_t position = begin;
  io::read_sequentially(file, begin, end - begin, piece_bytes, [&](const std::byte* data, std::size_t size) {
    const auto* text = reinterpret_cast<const char*>(data);
    for (int a = 0; a < kStates; ++a) {
      if (takers[a].empty()) continue;
      for (const char* p = text; p < text + size;) {
        const char* record_end = formats::find_record_end(p, text + size, syntax, state[a]);
        if (!record_end) break;
        const std::uint64_t at = position + static_cast<std::uint64_t>(record_end - text);
        for (const int s : takers[a]) ranges[s].note_end(at, input_bytes);
        p = record_end;
      }
    }
    for (int b = 1; b < kStates; ++b) {
      for (int a = 0; a < b && !takers[b].empty(); ++a) {
        if (takers[a].empty() || state[a] != state[b]) continue;
        takers[a].insert(takers[a].end(), takers[b].begin(), takers[b].end());
        takers[b].clear();
      }
    }
    position += size;
  });
  for (int a = 0; a < kStates; ++a) {
    for (const int s : takers[a]) ranges[s].count.state_at_end = static_cast<std::uint64_t>(state[a]);
  }
}

// The second look: the byte offsets where the k-th records (from 0, for
// each k of `ks`, ascending) that start in a range entered at `begin` in
// `state` start, in one pass from `begin` to the last of them.
std::vector<std::uint64_t> find_starts(io::BlockFile& file, std::uint64_t begin, std::uint64_t input_bytes,
                                       const formats::RecordSyntax& syntax, QuoteState state,
                                       const std::vector<std::uint64_t>& ks, std::size_t piece_bytes) {
  std::vector<std::uint64_t> found;
  if (ks.empty()) return found;
  const io::AlignedBuffer buffer = io::allocate_aligned(piece_bytes);
  const auto* text = reinterpret_cast<const char*>(buffer.get());
  std::uint64_t k = 0;
  for (std::uint64_t position = begin; position < input_bytes;) {
    const auto size = static_cast<std::size_t>(std::min<std::uint64_t>(piece_bytes, input_bytes - position));
    file.read_now(buffer.get(), position, size);
    for (const char* p = text; p < text + size;) {
      const char* record_end = formats::find_record_end(p, text + size, syntax, state);
      if (!record_end) break;
      const std::uint64_t at = position + static_cast<std::uint64_t>(record_end - text);
      if (at < input_bytes) {
        while (found.size() < ks.size() && ks[found.size()] == k) found.push_back(at);
        if (found.size() == ks.size()) return found;
        ++k;
      }
      p = record_end;
    }
    position += size;
  }
  throw std::logic_error("text split: a record counted in the first pass was not found again");
}

// Step 2 of split_text_input: the ranges composed in rank order, the state
// each starts in, hence its true count and the global index of its first
// record (first_index, ranks + 1 entries; entry_state). Record 0 (at byte 0)
// is rank 0's, before the records its scan finds. Throws InputError for an
// unterminated quoted field.
void compose(const std::vector<RangeScan>& scans, std::uint64_t bytes, const std::string& display_name,
             std::vector<std::uint64_t>& first_index, std::vector<std::uint64_t>& entry_state) {
  const auto ranks = static_cast<int>(scans.size());
  first_index.assign(ranks + 1, 0);
  entry_state.assign(ranks, 0);
  std::uint64_t state = static_cast<std::uint64_t>(QuoteState::kFieldStart), last_start = kNone;
  for (int r = 0; r < ranks; ++r) {
    const RangeCount& count = scans[r][state];
    const std::uint64_t implicit = r == 0 && bytes > 0 ? 1 : 0;
    entry_state[r] = state;
    first_index[r + 1] = first_index[r] + implicit + count.starts;
    if (implicit) last_start = 0;
    if (count.starts > 0) last_start = count.last_start;
    state = count.state_at_end;
  }
  if (bytes > 0 && state == static_cast<std::uint64_t>(QuoteState::kQuoted)) {
    throw InputError("input " + display_name + ": unterminated quoted field in the record starting at byte " +
                     std::to_string(last_start));
  }
}

// How the ranks' ranges compose (step 2 of split_text_input): record
// first_index[r] is the first that starts in rank r's range, entered in
// QuoteState entry_state[r].
struct Composition {
  const std::vector<std::uint64_t>& first_index;
  const std::vector<std::uint64_t>& entry_state;
  int me;
};

// The byte offsets where the records of global indices `indices` start,
// the same on every rank: each rank finds those that start in its range
// (in one pass), and the ranks gather them. kNone for an index past the
// last record. Collective.
std::vector<std::uint64_t> locate_starts(io::BlockFile& file, std::uint64_t bytes, const formats::RecordSyntax& syntax,
                                         const Composition& c, const std::vector<std::uint64_t>& indices,
                                         Communicator& comm, std::size_t piece_bytes) {
  const std::uint64_t first = c.first_index[c.me], end = c.first_index[c.me + 1];
  const std::uint64_t implicit = c.me == 0 && bytes > 0 ? 1 : 0;  // record 0, at byte 0, is found by no scan
  std::vector<std::uint64_t> mine;  // the k-th record that the scan of this rank's range finds, ascending
  for (const std::uint64_t index : indices) {
    if (first + implicit <= index && index < end) mine.push_back(index - first - implicit);
  }
  std::sort(mine.begin(), mine.end());
  mine.erase(std::unique(mine.begin(), mine.end()), mine.end());
  const std::vector<std::uint64_t> found =
      find_starts(file, range_begin(bytes, c.me, comm.size()), bytes, syntax,
                  static_cast<QuoteState>(c.entry_state[c.me]), mine, piece_bytes);
  std::vector<std::uint64_t> at(indices.size(), kNone);
  for (std::size_t q = 0; q < indices.size(); ++q) {
    const std::uint64_t index = indices[q];
    if (first <= index && index < first + implicit) at[q] = 0;
    if (first + implicit <= index && index < end) {
      at[q] = found[std::lower_bound(mine.begin(), mine.end(), index - first - implicit) - mine.begin()];
    }
  }
  const std::vector<std::uint64_t> all = comm.all_gather(at);
  for (std::size_t q = 0; q < indices.size(); ++q) {
    for (int r = 0; r < comm.size(); ++r) at[q] = std::min(at[q], all[r * indices.size() + q]);
  }
  return at;
}

// Step 4 of split_text_input: the longest record and the squares, the same
// on every rank (summed in rank order): each rank's own records, the records
// that cross into a rank's range (from the last record end before it to its
// first), and a last record without its terminator (it gets one). `own`:
// this rank's lengths in its true entry state. Collective.
void add_record_lengths(TextSplit& split, const RecordLengths& own, const std::vector<RangeScan>& scans,
                        const Composition& c, std::uint64_t bytes, std::uint64_t header_records, std::uint64_t total,
                        Communicator& comm) {
  // The lengths of the records that start and end in this rank's range
  // (in its true entry state), less those of the header: the record ending
  // at its k-th record end (k from 0) is record first_index[me] - 1 + k
  // (rank 0: record 0 ends at its first).
  struct Found {
    std::uint64_t longest = 0;
    double squares = 0;
  } found;
  const auto records_before = [&](int r) { return r == 0 ? std::uint64_t{1} : c.first_index[r]; };
  if (bytes > 0) {
    const std::uint64_t first_inner = records_before(c.me);  // the index of the record ending at the second end
    const std::uint64_t skip = header_records > first_inner ? header_records - first_inner : 0;
    own.add_after(skip, found.longest, found.squares);
  }
  const std::vector<Found> all = comm.all_gather(found);
  const auto add = [&](std::uint64_t length, std::uint64_t index) {
    if (index < header_records) return;
    split.longest_record_bytes = std::max(split.longest_record_bytes, length);
    split.record_bytes_squared += static_cast<double>(length) * static_cast<double>(length);
  };
  std::uint64_t last_end = 0;
  for (int r = 0; r < comm.size() && bytes > 0; ++r) {
    const RangeCount& count = scans[r][c.entry_state[r]];
    if (count.first_end == kNone) continue;
    add(count.first_end - last_end, records_before(r) - 1);
    last_end = count.last_end;
    split.longest_record_bytes = std::max(split.longest_record_bytes, all[r].longest);
    split.record_bytes_squared += all[r].squares;
  }
  if (last_end < bytes) add(bytes - last_end + 1, total - 1);
}

// A spread root's records held by bytes (distribution.hpp, spread_root):
// rank r holds the data records that start in its counting range, bytes
// [F r / P, F (r + 1) / P) of the input (the header's records, which rank 0
// reads first, excluded), so that its share of the bytes is off by less
// than one record; first_index[r] is the first such record (the whole
// input's index).
std::vector<std::uint64_t> held_by_bytes(const std::vector<std::uint64_t>& first_index, std::uint64_t header_records,
                                         std::uint64_t records) {
  std::vector<std::uint64_t> held(first_index.size());
  for (std::size_t r = 0; r + 1 < first_index.size(); ++r) {
    held[r] = std::min(records, first_index[r] > header_records ? first_index[r] - header_records : 0);
  }
  held.back() = records;
  return held;
}

}  // namespace

TextSplit split_text_input(io::BlockFile& file, std::uint64_t bytes, const formats::RecordSyntax& syntax,
                           std::uint64_t header_records, const core::PlanConstants& constants,
                           const std::string& display_name, Communicator& comm, std::size_t piece_bytes) {
  const std::uint64_t leaf_records = constants.leaf_records;
  const int ranks = comm.size(), me = comm.rank();
  const std::uint64_t begin = range_begin(bytes, me, ranks), end = range_begin(bytes, me + 1, ranks);
  // 1. Count the records that start in this rank's range, from every state it may start in.
  std::vector<RangeRecords> ranges(kStates, RangeRecords{RangeCount{}, RecordLengths(header_records)});
  if (syntax.quoted) {
    scan_quoted(file, begin, end, bytes, syntax, piece_bytes, ranges);
  } else {
    scan_plain(file, begin, end, bytes, syntax.terminator, piece_bytes, ranges[0]);
  }
  RangeScan mine{};
  for (int s = 0; s < kStates; ++s) mine[s] = ranges[s].count;
  const std::vector<RangeScan> scans = comm.all_gather(mine);

  // 2. Every rank composes the ranges in order.
  std::vector<std::uint64_t> first_index, entry_state;
  compose(scans, bytes, display_name, first_index, entry_state);
  const std::uint64_t total = first_index[ranks];
  TextSplit split;
  split.records = total > header_records ? total - header_records : 0;
  const std::uint64_t chunks = (split.records + leaf_records - 1) / leaf_records;
  split.chunk_begin.resize(ranks + 1);
  for (int r = 0; r <= ranks; ++r) {
    const std::uint64_t g = r == ranks ? total : first_index[r];
    split.chunk_begin[r] =
        g <= header_records ? 0 : std::min(chunks, (g - header_records + leaf_records - 1) / leaf_records);
  }
  split.chunk_begin[ranks] = chunks;

  // 3. The second look: where each rank's first chunk, the data after the
  // header, and each rank's held records start (by global index).
  split.held_begin = spread_root(split.records, constants, ranks)
                         ? held_by_bytes(first_index, header_records, split.records)
                         : chunk_first_records(split.chunk_begin, split.records, constants);
  const std::vector<std::uint64_t>& held = split.held_begin;
  std::vector<std::uint64_t> indices;
  for (int r = 0; r < ranks; ++r) indices.push_back(header_records + split.chunk_begin[r] * leaf_records);
  for (int r = 0; r < ranks; ++r) indices.push_back(header_records + held[r]);
  indices.push_back(header_records);
  const Composition composition{first_index, entry_state, me};
  const std::vector<std::uint64_t> at =
      locate_starts(file, bytes, syntax, composition, indices, comm, piece_bytes);
  split.header_bytes = total > header_records ? at[2 * ranks] : bytes;
  split.data_begin.assign(ranks + 1, bytes);
  split.held_byte_begin.assign(ranks + 1, bytes);
  for (int r = ranks - 1; r >= 0; --r) {
    const bool chunks_here = split.chunk_begin[r] < split.chunk_begin[r + 1];
    split.data_begin[r] = chunks_here ? at[r] : split.data_begin[r + 1];
    split.held_byte_begin[r] = held[r] < held[r + 1] ? at[ranks + r] : split.held_byte_begin[r + 1];
  }
  // 4. The longest record and the squares.
  add_record_lengths(split, ranges[entry_state[me]].lengths, scans, composition, bytes, header_records, total, comm);
  char last_byte = syntax.terminator;
  if (bytes > 0) file.read_now(&last_byte, bytes - 1, 1);
  split.add_terminator = bytes > 0 && last_byte != syntax.terminator;
  return split;
}

}  // namespace extshuffle::mpi
