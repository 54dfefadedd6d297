#include "extshuffle/dataset/text_input.hpp"

#include <algorithm>
#include <string>
#include <cstring>
#include <vector>

#include "extshuffle/errors.hpp"
#include "extshuffle/dataset/record_digest.hpp"
#include "extshuffle/formats/terminator_scan.hpp"
#include "extshuffle/formats/tfrecord.hpp"
#include "extshuffle/io/aligned_buffer.hpp"
#include "extshuffle/io/block_file.hpp"

namespace extshuffle::dataset {

namespace {

// Terminators counted in bulk, and the longest gap between them (the
// longest record): ends found 64 Ki at a time, `open` the bytes since the
// last terminator of earlier pieces.
class TerminatorCount {
 public:
  explicit TerminatorCount(char terminator) : terminator_(terminator), ends_(kBlock) {}
  void add(const char* begin, const char* end) {
    for (const char* at = begin;;) {
      const std::size_t found = formats::find_record_ends(at, end, terminator_, kBlock, ends_.data());
      std::uint64_t previous = 0;
      for (std::size_t k = 0; k < found; ++k) {
        const std::uint64_t length = ends_[k] - previous + (k == 0 ? open_ : 0);
        longest_ = std::max(longest_, length);
        squares_ += static_cast<double>(length) * static_cast<double>(length);
        previous = ends_[k];
      }
      records_ += found;
      if (found > 0) open_ = 0;
      at += previous;
      if (found < kBlock) {
        open_ += static_cast<std::uint64_t>(end - at);
        return;
      }
    }
  }
  std::uint64_t records() const { return records_; }
  // The longest record, counting an unterminated last one (it gets a terminator).
  std::uint64_t longest() const { return std::max(longest_, open_ > 0 ? open_ + 1 : 0); }
  double squares() const {
    const double last = open_ > 0 ? static_cast<double>(open_ + 1) : 0;
    return squares_ + last * last;
  }

 private:
  static constexpr std::size_t kBlock = 65536;
  char terminator_;
  std::vector<std::uint64_t> ends_;
  std::uint64_t records_ = 0, longest_ = 0, open_ = 0;
  double squares_ = 0;
};

// Pieces of the counting pass when it streams (two in turn while it only
// counts terminators): 2 MiB keeps them in the CPU's caches and the pass
// within kCountingBytes of memory (driver/run_dataset.cpp, --dry-run's peak).
constexpr std::size_t kCountPieceBytes = std::size_t{2} << 20;

// Counts the terminators in [from, bytes) of the input at `offset` of
// `file`, reading the next piece while this one is counted so that the disk
// never waits for the count; `last_byte` becomes the input's last byte when
// there is any.
void count_rest(io::BlockFile& file, std::uint64_t offset, std::uint64_t from, std::uint64_t bytes,
                TerminatorCount& count, char& last_byte) {
  io::read_sequentially(file, offset + from, bytes - from, kCountPieceBytes,
                        [&](const std::byte* data, std::size_t size) {
    const auto* text = reinterpret_cast<const char*>(data);
    count.add(text, text + size);
    last_byte = text[size - 1];
  });
}

}  // namespace

TextCount count_text_records(io::BlockFile& file, std::uint64_t offset, std::uint64_t bytes,
                             const formats::RecordSyntax& syntax, std::uint64_t header_records, bool skip_blank,
                             const std::string& display_name, RecordDigest* digest, const std::byte* mapped) {
  // Mapped: counted where the bytes lie, a piece at a time (the kernel reads
  // ahead as the pages are touched).
  constexpr std::size_t kPiece = std::size_t{8} << 20;
  TextCount count;
  // Streaming, the bytes pass through a buffer of one piece (grown for a
  // longer record) that keeps only the record in progress.
  io::AlignedBuffer storage;
  std::size_t capacity = kPiece;
  const char* buffer = nullptr;
  if (mapped != nullptr) {
    buffer = reinterpret_cast<const char*>(mapped);
    capacity = bytes;
  } else {
    capacity = kCountPieceBytes;
    storage = io::allocate_aligned(capacity);
    buffer = reinterpret_cast<const char*>(storage.get());
  }
  std::uint64_t position = 0;  // of buffer[0] in the input
  std::size_t fill = 0, at = 0;
  std::uint64_t headers_seen = 0;
  // Plain lines need no record boundaries once the header is passed: count terminators.
  const bool framed = syntax.framing == formats::RecordFraming::kTfrecord;
  const bool count_terminators = !syntax.quoted && !skip_blank && !digest && !framed;
  char last_byte = syntax.terminator;
  bool counted_by_terminators = false;  // the last piece: its unterminated line is not counted yet
  // The next piece, after fill.
  auto more = [&] {
    if (mapped != nullptr) {
      fill = std::min<std::uint64_t>(bytes, fill + kPiece);
    } else {
      // Keep the incomplete record; grow the buffer when it fills it.
      std::memmove(storage.get(), buffer + at, fill - at);
      position += at;
      fill -= at;
      at = 0;
      if (fill == capacity) {
        io::AlignedBuffer larger = io::allocate_aligned(2 * capacity);
        std::memcpy(larger.get(), storage.get(), fill);
        storage = std::move(larger);
        capacity *= 2;
        buffer = reinterpret_cast<const char*>(storage.get());
      }
      const std::size_t take =
          static_cast<std::size_t>(std::min<std::uint64_t>(capacity - fill, bytes - position - fill));
      file.read_now(storage.get() + fill, offset + position + fill, take);
      fill += take;
    }
    last_byte = buffer[fill - 1];
  };
  while (position + fill < bytes || at < fill) {
    if (position + fill < bytes) more();
  const bool at_input_end = position + fill == bytes;
    if (count_terminators && headers_seen == header_records) {
      TerminatorCount terminators(syntax.terminator);
      terminators.add(buffer + at, buffer + fill);
      if (mapped != nullptr) {
        while (fill < bytes) {
          const std::size_t from = fill;
          more();
          terminators.add(buffer + from, buffer + fill);
        }
      } else {
        count_rest(file, offset, position + fill, bytes, terminators, last_byte);
      }
      count.records += terminators.records();
      count.longest_record_bytes = terminators.longest();
      count.record_bytes_squared += terminators.squares();
      counted_by_terminators = true;
      break;
    }
    counted_by_terminators = false;
    while (at < fill) {
      // TFRecord: each frame's CRCs, checked here once (and its truncation).
      if (framed) {
        formats::check_tfrecord_frame(buffer + at, buffer + fill, bytes - position - at, position + at, display_name);
      }
      const formats::RecordScan scan = formats::scan_record(buffer + at, buffer + fill, syntax);
      if (!scan.end) {
        if (!at_input_end) break;
        if (scan.inside_quotes) {
          throw InputError("input " + display_name + ": unterminated quoted field in the record starting at byte " +
                           std::to_string(position + at));
        }
        // The last record lacks its terminator: it ends at the input's end.
        const std::size_t end = fill;
        if (headers_seen < header_records) {
          ++headers_seen;
          count.header_bytes = position + end;
        } else if (!skip_blank || !formats::is_blank_record(buffer + at, buffer + end + 1)) {
          ++count.records;
          count.longest_record_bytes = std::max<std::uint64_t>(count.longest_record_bytes, end - at + 1);
          count.record_bytes_squared += static_cast<double>(end - at + 1) * static_cast<double>(end - at + 1);
          if (digest) {
            std::string record(buffer + at, end - at);
            record += syntax.terminator;
            digest->add(reinterpret_cast<const std::byte*>(record.data()), record.size());
          }
        }
        at = fill;
        break;
      }
      const std::size_t end = static_cast<std::size_t>(scan.end - buffer);
      if (headers_seen < header_records) {
        ++headers_seen;
        count.header_bytes = position + end;
      } else if (!skip_blank || !formats::is_blank_record(buffer + at, scan.end)) {
        ++count.records;
        count.longest_record_bytes = std::max<std::uint64_t>(count.longest_record_bytes, end - at);
        count.record_bytes_squared += static_cast<double>(end - at) * static_cast<double>(end - at);
        if (digest) digest->add(reinterpret_cast<const std::byte*>(buffer + at), end - at);
      }
      at = end;
    }
  }
  if (counted_by_terminators && last_byte != syntax.terminator) {
    ++count.records;  // the last line, unterminated
  }
  // With blank records skipped, a record's span in the node reaches to the
  // next record: bound it by the blank records' bytes too (rare; see the
  // header).
  if (skip_blank) count.longest_record_bytes = std::max(count.longest_record_bytes, bytes - count.header_bytes);
  count.add_terminator = bytes > 0 && last_byte != syntax.terminator && !framed;
  return count;
}

}  // namespace extshuffle::dataset
