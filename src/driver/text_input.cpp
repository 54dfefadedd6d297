#include "text_input.hpp"

#include <algorithm>
#include <string>
#include <cstring>

#include "extshuffle/errors.hpp"
#include "extshuffle/driver/record_digest.hpp"
#include "extshuffle/formats/terminator_scan.hpp"
#include "extshuffle/formats/tfrecord.hpp"
#include "extshuffle/io/aligned_buffer.hpp"
#include "extshuffle/io/block_file.hpp"

namespace extshuffle::driver {

namespace {

// Counts the terminators in [from, bytes) of `file`, reading the next piece
// while this one is counted so that the disk never waits for the count;
// `last_byte` becomes the input's last byte when there is any.
std::uint64_t count_rest(io::BlockFile& file, std::uint64_t from, std::uint64_t bytes, char terminator,
                         char& last_byte) {
  std::uint64_t records = 0;
  io::read_sequentially(file, from, bytes - from, std::size_t{8} << 20, [&](const std::byte* data, std::size_t size) {
    const auto* text = reinterpret_cast<const char*>(data);
    records += formats::count_terminators(text, text + size, terminator);
    last_byte = text[size - 1];
  });
  return records;
}

}  // namespace

TextCount count_text_records(io::BlockFile& file, std::uint64_t bytes, const formats::RecordSyntax& syntax,
                             std::uint64_t header_records, bool skip_blank, const std::string& display_name,
                             RecordDigest* digest) {
  constexpr std::size_t kPiece = std::size_t{8} << 20;
  TextCount count;
  io::AlignedBuffer storage = io::allocate_aligned(kPiece);
  std::size_t capacity = kPiece;
  char* buffer = reinterpret_cast<char*>(storage.get());
  std::uint64_t position = 0;  // of buffer[0] in the input
  std::size_t fill = 0, at = 0;
  std::uint64_t headers_seen = 0;
  // Plain lines need no record boundaries once the header is passed: count terminators.
  const bool framed = syntax.framing == formats::RecordFraming::kTfrecord;
  const bool count_terminators = !syntax.quoted && !skip_blank && !digest && !framed;
  char last_byte = syntax.terminator;
  bool counted_by_terminators = false;  // the last piece: its unterminated line is not counted yet
  while (position + fill < bytes || at < fill) {
    if (position + fill < bytes) {
      // Keep the incomplete record; grow the buffer when it fills it.
      std::memmove(buffer, buffer + at, fill - at);
      position += at;
      fill -= at;
      at = 0;
      if (fill == capacity) {
        io::AlignedBuffer larger = io::allocate_aligned(2 * capacity);
        std::memcpy(larger.get(), storage.get(), fill);
        storage = std::move(larger);
        capacity *= 2;
        buffer = reinterpret_cast<char*>(storage.get());
      }
      const std::size_t take = static_cast<std::size_t>(std::min<std::uint64_t>(capacity - fill, bytes - position - fill));
      file.read_now(buffer + fill, position + fill, take);
      fill += take;
      last_byte = buffer[fill - 1];
    }
    const bool at_input_end = position + fill == bytes;
    if (count_terminators && headers_seen == header_records) {
      count.records += formats::count_terminators(buffer + at, buffer + fill, syntax.terminator);
      count.records += count_rest(file, position + fill, bytes, syntax.terminator, last_byte);
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
        if (digest) digest->add(reinterpret_cast<const std::byte*>(buffer + at), end - at);
      }
      at = end;
    }
  }
  if (counted_by_terminators && last_byte != syntax.terminator) {
    ++count.records;  // the last line, unterminated
  }
  count.add_terminator = bytes > 0 && last_byte != syntax.terminator && !framed;
  return count;
}

}  // namespace extshuffle::driver
