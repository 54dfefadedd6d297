// TFRecord frames (TensorFlow's record file format, docs/conventions.md, Record formats): each
// record is one frame
//   uint64 length (little-endian), uint32 masked CRC-32C of those 8 bytes,
//   `length` bytes of data, uint32 masked CRC-32C of the data,
// and a file is frames back to back, with no header. The frames are the
// records: the shuffle moves them whole and writes them back byte for byte;
// their CRCs are checked once, when the records are counted.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace extshuffle::formats {

// The length field and its CRC before the data; the data's CRC after it.
inline constexpr std::size_t kTfrecordHeaderBytes = 12;
inline constexpr std::size_t kTfrecordFooterBytes = 4;
inline constexpr std::size_t kTfrecordOverheadBytes = kTfrecordHeaderBytes + kTfrecordFooterBytes;

// CRC-32C (Castagnoli, the iSCSI polynomial) of `bytes` bytes, continuing
// from `crc` (the CRC of the bytes before; 0 to start): crc32c("123456789")
// is 0xE3069283. Computed by Intel ISA-L (crc32_iscsi, SSE4.2 or faster
// where the CPU has it): about 10 GB/s and more here.
std::uint32_t crc32c(const void* data, std::size_t bytes, std::uint32_t crc = 0);

// TFRecord's masking of a CRC (rotate right by 15, add 0xa282ead8), so that
// a CRC of data holding CRCs does not degenerate.
constexpr std::uint32_t mask_tfrecord_crc(std::uint32_t crc) {
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

// The frame's length field: the bytes of data it holds. `header` must hold
// kTfrecordHeaderBytes bytes. Cost: a load.
std::uint64_t tfrecord_data_length(const char* header);

// Where the frame that starts at `begin` ends in [begin, end): one past its
// data CRC, or nullptr when [begin, end) does not hold the whole frame (an
// absurd length included). Checks no CRC. Cost: a load.
const char* tfrecord_frame_end(const char* begin, const char* end);

// Checks the frame that starts at `begin`, byte `offset` of the input, with
// [begin, available_end) read so far and `input_bytes_left` bytes from
// `begin` to the input's end: the length's CRC as soon as the header is
// there, that the frame fits in the input, and the data's CRC once the
// whole frame is there (earlier calls on the same frame check what they
// can; call again when more is read). Throws InputError naming
// `display_name` and `offset` for a CRC that does not match or a frame cut
// short by the input's end. Cost: one CRC-32C over the frame.
void check_tfrecord_frame(const char* begin, const char* available_end, std::uint64_t input_bytes_left,
                          std::uint64_t offset, const std::string& display_name);

// Appends one frame holding `data` to `out` (tests and tools write frames).
void append_tfrecord_frame(std::string& out, std::string_view data);

}  // namespace extshuffle::formats
