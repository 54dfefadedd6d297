#include "text_input.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "extshuffle/driver/errors.hpp"
#include "extshuffle/driver/record_digest.hpp"
#include "extshuffle/io/block_file.hpp"

namespace extshuffle::driver {

TextCount count_text_records(io::BlockFile& file, std::uint64_t bytes, const formats::RecordSyntax& syntax,
                             std::uint64_t header_records, bool skip_blank, const std::string& display_name,
                             RecordDigest* digest) {
  constexpr std::size_t kPiece = std::size_t{8} << 20;
  TextCount count;
  std::vector<char> buffer(kPiece);
  std::uint64_t position = 0;  // of buffer[0] in the input
  std::size_t fill = 0, at = 0;
  std::uint64_t headers_seen = 0;
  // Plain lines need no record boundaries once the header is passed: count terminators.
  const bool count_terminators = !syntax.quoted && !skip_blank && !digest;
  char last_byte = syntax.terminator;
  bool counted_by_terminators = false;  // the last piece: its unterminated line is not counted yet
  while (position + fill < bytes || at < fill) {
    if (position + fill < bytes) {
      // Keep the incomplete record; grow the buffer when it fills it.
      std::copy(buffer.begin() + static_cast<std::ptrdiff_t>(at), buffer.begin() + static_cast<std::ptrdiff_t>(fill),
                buffer.begin());
      position += at;
      fill -= at;
      at = 0;
      if (fill == buffer.size()) buffer.resize(buffer.size() * 2);
      const std::size_t take = static_cast<std::size_t>(std::min<std::uint64_t>(buffer.size() - fill, bytes - position - fill));
      file.read_now(buffer.data() + fill, position + fill, take);
      fill += take;
      last_byte = buffer[fill - 1];
    }
    const bool at_input_end = position + fill == bytes;
    if (count_terminators && headers_seen == header_records) {
      count.records += static_cast<std::uint64_t>(
          std::count(buffer.begin() + static_cast<std::ptrdiff_t>(at), buffer.begin() + static_cast<std::ptrdiff_t>(fill),
                     syntax.terminator));
      at = fill;
      counted_by_terminators = true;
      continue;
    }
    counted_by_terminators = false;
    while (at < fill) {
      const formats::RecordScan scan = formats::scan_record(buffer.data() + at, buffer.data() + fill, syntax);
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
        } else if (!skip_blank || !formats::is_blank_record(buffer.data() + at, buffer.data() + end + 1)) {
          ++count.records;
          if (digest) {
            std::string record(buffer.data() + at, end - at);
            record += syntax.terminator;
            digest->add(reinterpret_cast<const std::byte*>(record.data()), record.size());
          }
        }
        at = fill;
        break;
      }
      const std::size_t end = static_cast<std::size_t>(scan.end - buffer.data());
      if (headers_seen < header_records) {
        ++headers_seen;
        count.header_bytes = position + end;
      } else if (!skip_blank || !formats::is_blank_record(buffer.data() + at, scan.end)) {
        ++count.records;
        if (digest) digest->add(reinterpret_cast<const std::byte*>(buffer.data() + at), end - at);
      }
      at = end;
    }
  }
  if (counted_by_terminators && last_byte != syntax.terminator) {
    ++count.records;  // the last line, unterminated
  }
  count.add_terminator = bytes > 0 && last_byte != syntax.terminator;
  return count;
}

}  // namespace extshuffle::driver
