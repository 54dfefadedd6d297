#include "record_starts.hpp"

#include <algorithm>

#include "extshuffle/errors.hpp"
#include "extshuffle/formats/tfrecord.hpp"
#include "extshuffle/io/block_file.hpp"

namespace extshuffle::mpi {
namespace {

// Calls `more(index, start)` for each record of the `total` bytes at
// `first_byte` of `file` in order, from record 0 at offset 0, while it
// returns true; then once more at the end (index: the number of records,
// start: `total`), where a last record lacking its terminator ends.
// Throws InputError if `more` still wants records after that.
template <class More>
void walk_record_starts(io::BlockFile& file, std::uint64_t first_byte, std::uint64_t total,
                        const formats::RecordSyntax& syntax, std::size_t piece_bytes_at_most, More more) {
  std::vector<char> piece(static_cast<std::size_t>(std::min<std::uint64_t>(
      std::max(piece_bytes_at_most, formats::kTfrecordHeaderBytes), std::max<std::uint64_t>(total, 1))));
  std::uint64_t piece_at = 0, piece_bytes = 0;  // the bytes in `piece`: [piece_at, piece_at + piece_bytes)
  const auto read_from = [&](std::uint64_t at) {
    piece_at = at;
    piece_bytes = std::min<std::uint64_t>(piece.size(), total - at);
    file.read_now(piece.data(), first_byte + at, static_cast<std::size_t>(piece_bytes));
  };
  std::uint64_t index = 0, start = 0;  // record `index` starts at `start`
  formats::QuoteState state = formats::QuoteState::kFieldStart;
  std::uint64_t scanned = 0;  // a terminated record: scanned up to here, in `state`
  while (more(index, start)) {
    if (start >= total)
      throw InputError("input '" + file.path() + "': changed while read (fewer records than counted)");
    if (syntax.framing == formats::Framing::kTfrecord) {
      // A frame's end is in its length field: only headers are read.
      if (start < piece_at || start + formats::kTfrecordHeaderBytes > piece_at + piece_bytes) read_from(start);
      if (piece_bytes < formats::kTfrecordHeaderBytes) throw InputError("input '" + file.path() + "': truncated frame");
      start += formats::kTfrecordOverheadBytes + formats::tfrecord_data_length(piece.data() + (start - piece_at));
      ++index;
      continue;
    }
    // Terminated records: scanned a piece at a time in the quoting state
    // where the last piece ended, so that a record of any length fits; the
    // last one may end at the end of the bytes, unterminated.
    for (;;) {
      if (scanned == piece_at + piece_bytes) {
        if (scanned == total) {
          start = total;
          break;
        }
        read_from(scanned);
      }
      const char* begin = piece.data() + (scanned - piece_at);
      const char* end = formats::find_record_end(begin, piece.data() + piece_bytes, syntax, state);
      if (end == nullptr) {
        scanned = piece_at + piece_bytes;
        continue;
      }
      scanned = start = piece_at + static_cast<std::uint64_t>(end - piece.data());
      break;
    }
    ++index;
  }
}

}  // namespace

std::vector<std::uint64_t> find_record_starts(io::BlockFile& file, std::uint64_t first_byte, std::uint64_t total,
                                              const formats::RecordSyntax& syntax,
                                              const std::vector<std::uint64_t>& wanted,
                                              std::size_t piece_bytes_at_most) {
  std::vector<std::uint64_t> found;
  walk_record_starts(file, first_byte, total, syntax, piece_bytes_at_most,
                     [&](std::uint64_t index, std::uint64_t start) {
                       while (found.size() < wanted.size() && wanted[found.size()] == index) found.push_back(start);
                       return found.size() < wanted.size();
                     });
  return found;
}

std::vector<RecordStart> records_starting_at(io::BlockFile& file, std::uint64_t first_byte, std::uint64_t total,
                                             const formats::RecordSyntax& syntax,
                                             const std::vector<std::uint64_t>& offsets,
                                             std::size_t piece_bytes_at_most) {
  std::vector<RecordStart> found;
  walk_record_starts(file, first_byte, total, syntax, piece_bytes_at_most,
                     [&](std::uint64_t index, std::uint64_t start) {
                       while (found.size() < offsets.size() && offsets[found.size()] <= start)
                         found.push_back({index, start});
                       return found.size() < offsets.size();
                     });
  return found;
}

std::vector<ChunkStart> chunks_starting_at(io::BlockFile& file, std::uint64_t first_byte, std::uint64_t total,
                                           const formats::RecordSyntax& syntax,
                                           const std::vector<std::uint64_t>& offsets, std::uint64_t first_index,
                                           std::uint64_t leaf_records, std::size_t piece_bytes_at_most) {
  std::vector<ChunkStart> found;
  RecordStart chunk;
  bool chunk_here = false;
  walk_record_starts(file, first_byte, total, syntax, piece_bytes_at_most,
                     [&](std::uint64_t index, std::uint64_t start) {
                       if ((first_index + index) % leaf_records == 0) {
                         chunk = {index, start};
                         chunk_here = true;
                       }
                       while (found.size() < offsets.size() && offsets[found.size()] <= start)
                         found.push_back({{index, start}, chunk, chunk_here});
                       return found.size() < offsets.size();
                     });
  return found;
}

}  // namespace extshuffle::mpi
