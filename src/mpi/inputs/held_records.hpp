// The records a rank holds (DistributedInput::State::held_data): its 1/P
// of a spread root's bytes (distribution.hpp, spread_root()), which it
// serves to the ranks whose output takes them (record_fetch.hpp). Held as the input's own mapped pages where the
// input can be mapped (read where another rank asks for them), else read
// into memory; text records are indexed by one scan of the held bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "extshuffle/formats/record_syntax.hpp"
#include "extshuffle/io/byte_extents.hpp"
#include "extshuffle/io/mapped_bytes.hpp"

namespace extshuffle::mpi {

class HeldRecords {
 public:
  // Records [first, end) of the input, whose bytes are `data`: fixed-size
  // records of `record_size` bytes, or (record_size 0) text of `syntax`.
  // `display_name` names the input in the mapping's error messages.
  HeldRecords(const io::ByteExtents& data, std::uint64_t first, std::uint64_t end, std::size_t record_size,
              const formats::RecordSyntax& syntax, const std::string& display_name);

  bool holds(std::uint64_t record) const { return first_ <= record && record < end_; }
  // The bytes of input record `record` (held), with its terminator.
  const std::byte* record(std::uint64_t record) const;
  std::uint64_t record_bytes(std::uint64_t record) const;
  // The input bytes read so far: text, the scan that indexed them; then
  // (fixed-size) the records handed on.
  std::uint64_t input_bytes_read() const { return input_bytes_read_; }
  void count_served(std::uint64_t bytes) {
    if (record_size_ > 0) input_bytes_read_ += bytes;
  }

 private:
  void index_text(const formats::RecordSyntax& syntax);

  std::uint64_t first_, end_;
  std::size_t record_size_;
  std::optional<io::MappedBytes> mapped_;
  std::vector<std::byte> copy_;  // where the input could not be mapped
  const std::byte* bytes_ = nullptr;
  std::uint64_t size_ = 0;
  std::vector<std::uint64_t> starts_;  // text: end_ - first_ + 1 offsets into bytes_
  std::uint64_t input_bytes_read_ = 0;
};

}  // namespace extshuffle::mpi
