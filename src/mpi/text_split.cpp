#include "text_split.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <stdexcept>

#include "extshuffle/errors.hpp"
#include "extshuffle/formats/terminator_scan.hpp"
#include "extshuffle/io/aligned_buffer.hpp"
#include "extshuffle/io/block_file.hpp"

namespace extshuffle::mpi {
namespace {

using formats::QuoteState;

constexpr std::uint64_t kNone = UINT64_MAX;
constexpr int kStates = 4;  // the values of formats::QuoteState

// What a rank's range holds when the scan enters it in one quoting state.
struct RangeCount {
  std::uint64_t starts = 0;           // records that start in the range (after a record's end, before the input's)
  std::uint64_t first_start = kNone;  // the byte offsets of the first and the last of them
  std::uint64_t last_start = kNone;
  std::uint64_t state_at_end = 0;     // the QuoteState where the range ends
};
using RangeScan = std::array<RangeCount, kStates>;

// Notes a record end at byte offset `at` (one past its terminator): a record
// starts there unless the input ends there.
void note_end(RangeCount& count, std::uint64_t at, std::uint64_t input_bytes) {
  if (at >= input_bytes) return;
  ++count.starts;
  if (count.first_start == kNone) count.first_start = at;
  count.last_start = at;
}

// Lines, TSV, JSONL: every terminator ends a record; counted in bulk.
RangeCount scan_plain(io::BlockFile& file, std::uint64_t begin, std::uint64_t end, std::uint64_t input_bytes,
                      char terminator, std::size_t piece_bytes) {
  RangeCount count;
  std::uint64_t position = begin;
  io::read_sequentially(file, begin, end - begin, piece_bytes, [&](const std::byte* data, std::size_t size) {
    const auto* text = reinterpret_cast<const char*>(data);
    const std::uint64_t found = formats::count_terminators(text, text + size, terminator);
    if (found > 0) {
      const std::uint64_t earlier_last = count.last_start;
      const auto* first = static_cast<const char*>(std::memchr(text, terminator, size));
      const auto* last = static_cast<const char*>(::memrchr(text, terminator, size));
      count.starts += found;
      if (count.first_start == kNone) count.first_start = position + static_cast<std::uint64_t>(first - text) + 1;
      count.last_start = position + static_cast<std::uint64_t>(last - text) + 1;
      if (count.last_start == input_bytes) {
        // The input's last terminator starts no record.
        --count.starts;
        if (found > 1) {
          const auto* before = static_cast<const char*>(::memrchr(text, terminator, static_cast<std::size_t>(last - text)));
          count.last_start = position + static_cast<std::uint64_t>(before - text) + 1;
        } else {
          count.last_start = earlier_last;
        }
        if (count.starts == 0) count.first_start = count.last_start = kNone;
      }
    }
    position += size;
  });
  return count;
}

// CSV: one scan per quoting state the range may start in, over each piece
// in turn. Two scans in the same state at the end of a piece (and alike in
// whether they have found a record yet) find the same records from then on:
// the later one follows the earlier and stops scanning.
RangeScan scan_quoted(io::BlockFile& file, std::uint64_t begin, std::uint64_t end, std::uint64_t input_bytes,
                      const formats::RecordSyntax& syntax, std::size_t piece_bytes) {
  struct Scan {
    RangeCount count;
    QuoteState state;
    int leader = -1;  // the scan this one follows, from the merge on
    std::uint64_t starts_ahead = 0, leader_last = kNone;
  };
  std::array<Scan, kStates> scans;
  for (int s = 0; s < kStates; ++s) scans[s].state = static_cast<QuoteState>(s);
  std::uint64_t position = begin;
  io::read_sequentially(file, begin, end - begin, piece_bytes, [&](const std::byte* data, std::size_t size) {
    const auto* text = reinterpret_cast<const char*>(data);
    for (Scan& scan : scans) {
      if (scan.leader >= 0) continue;
      for (const char* p = text; p < text + size;) {
        const char* record_end = formats::find_record_end(p, text + size, syntax, scan.state);
        if (!record_end) break;
        note_end(scan.count, position + static_cast<std::uint64_t>(record_end - text), input_bytes);
        p = record_end;
      }
    }
    for (int b = 1; b < kStates; ++b) {
      for (int a = 0; a < b && scans[b].leader < 0; ++a) {
        const Scan& leader = scans[a];
        Scan& follower = scans[b];
        if (leader.leader >= 0 || leader.state != follower.state ||
            (leader.count.first_start == kNone) != (follower.count.first_start == kNone)) {
          continue;
        }
        follower.leader = a;
        follower.starts_ahead = follower.count.starts - leader.count.starts;
        follower.leader_last = leader.count.last_start;
      }
    }
    position += size;
  });
  // A leader has a smaller index than its followers, and may have become a
  // follower itself later: resolve in index order, from the leaders' results.
  RangeScan result;
  for (int s = 0; s < kStates; ++s) {
    const Scan& scan = scans[s];
    RangeCount count = scan.count;
    if (scan.leader >= 0) {
      const RangeCount& leader = result[scan.leader];
      count.starts = leader.starts + scan.starts_ahead;
      if (count.first_start == kNone) count.first_start = leader.first_start;
      if (leader.last_start != scan.leader_last) count.last_start = leader.last_start;
      count.state_at_end = leader.state_at_end;
    } else {
      count.state_at_end = static_cast<std::uint64_t>(scan.state);
    }
    result[s] = count;
  }
  return result;
}

// The second look: the byte offset where the k-th record (from 0) that
// starts in a range entered at `begin` in `state` starts.
std::uint64_t find_start(io::BlockFile& file, std::uint64_t begin, std::uint64_t input_bytes,
                         const formats::RecordSyntax& syntax, QuoteState state, std::uint64_t k, std::size_t piece_bytes) {
  const io::AlignedBuffer buffer = io::allocate_aligned(piece_bytes);
  const auto* text = reinterpret_cast<const char*>(buffer.get());
  for (std::uint64_t position = begin; position < input_bytes;) {
    const auto size = static_cast<std::size_t>(std::min<std::uint64_t>(piece_bytes, input_bytes - position));
    file.read_now(buffer.get(), position, size);
    for (const char* p = text; p < text + size;) {
      const char* record_end = formats::find_record_end(p, text + size, syntax, state);
      if (!record_end) break;
      const std::uint64_t at = position + static_cast<std::uint64_t>(record_end - text);
      if (at < input_bytes && k-- == 0) return at;
      p = record_end;
    }
    position += size;
  }
  throw std::logic_error("text split: a record counted in the first pass was not found again");
}

}  // namespace

std::uint64_t range_begin(std::uint64_t bytes, int rank, int ranks) {
  return static_cast<std::uint64_t>(static_cast<unsigned __int128>(bytes) * static_cast<unsigned>(rank) /
                                    static_cast<unsigned>(ranks));
}

TextSplit split_text_input(io::BlockFile& file, std::uint64_t bytes, const formats::RecordSyntax& syntax,
                           std::uint64_t header_records, std::uint64_t leaf_records, const std::string& display_name,
                           Communicator& comm, std::size_t piece_bytes) {
  const int ranks = comm.size(), me = comm.rank();
  const std::uint64_t begin = range_begin(bytes, me, ranks), end = range_begin(bytes, me + 1, ranks);
  // 1. Count the records that start in this rank's range, from every state it may start in.
  RangeScan mine{};
  if (syntax.quoted) {
    mine = scan_quoted(file, begin, end, bytes, syntax, piece_bytes);
  } else {
    mine[0] = scan_plain(file, begin, end, bytes, syntax.terminator, piece_bytes);
  }
  const std::vector<RangeScan> scans = comm.all_gather(mine);

  // 2. Every rank composes the ranges in order: the state each starts in,
  // hence its true count and the global index of its first record.
  // Record 0 (at byte 0) is rank 0's, before the records its scan finds.
  std::vector<std::uint64_t> first_index(ranks + 1), entry_state(ranks);
  std::uint64_t state = static_cast<std::uint64_t>(QuoteState::kFieldStart), last_start = kNone;
  first_index[0] = 0;
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

  // 3. The second look: where this rank's first chunk, and the data after
  // the header, start, if those records start in its range.
  const std::uint64_t implicit = me == 0 && bytes > 0 ? 1 : 0;
  const auto offset_of = [&](std::uint64_t index) {
    const std::uint64_t k = index - first_index[me];
    if (k < implicit) return std::uint64_t{0};
    return find_start(file, begin, bytes, syntax, static_cast<QuoteState>(entry_state[me]), k - implicit, piece_bytes);
  };
  struct Found {
    std::uint64_t chunk_start = kNone, data_start = kNone;
  } found;
  if (split.chunk_begin[me] < split.chunk_begin[me + 1]) {
    found.chunk_start = offset_of(header_records + split.chunk_begin[me] * leaf_records);
  }
  if (total > header_records && first_index[me] <= header_records && header_records < first_index[me + 1]) {
    found.data_start = offset_of(header_records);
  }
  const std::vector<Found> all = comm.all_gather(found);
  split.header_bytes = bytes;
  split.data_begin.assign(ranks + 1, bytes);
  for (int r = ranks - 1; r >= 0; --r) {
    split.data_begin[r] = all[r].chunk_start != kNone ? all[r].chunk_start : split.data_begin[r + 1];
    if (all[r].data_start != kNone) split.header_bytes = all[r].data_start;
  }
  char last_byte = syntax.terminator;
  if (bytes > 0) file.read_now(&last_byte, bytes - 1, 1);
  split.add_terminator = bytes > 0 && last_byte != syntax.terminator;
  return split;
}

}  // namespace extshuffle::mpi
