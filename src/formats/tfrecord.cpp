#include "extshuffle/formats/tfrecord.hpp"

#include <isa-l/crc.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstring>

#include "extshuffle/errors.hpp"

namespace extshuffle::formats {
namespace {

std::uint32_t load_u32(const char* at) {
  std::uint32_t value = 0;
  std::memcpy(&value, at, 4);
  return value;  // little-endian: this build is x86-64 or another little-endian target
}

void store_u32(std::string& out, std::uint32_t value) {
  char bytes[4];
  std::memcpy(bytes, &value, 4);
  out.append(bytes, 4);
}

std::string hex(std::uint32_t value) {
  char text[16];
  std::snprintf(text, sizeof text, "0x%08x", value);
  return text;
}

std::string where(const std::string& display_name, std::uint64_t offset) {
  return "input " + display_name + ": TFRecord frame at byte " + std::to_string(offset);
}

}  // namespace

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "TFRecord fields are read as little-endian integers");

std::uint32_t crc32c(const void* data, std::size_t bytes, std::uint32_t crc) {
  // ISA-L's crc32_iscsi neither inverts its initial value nor its result,
  // and counts in int: the standard CRC-32C is its complement, in pieces.
  auto* at = static_cast<unsigned char*>(const_cast<void*>(data));
  std::uint32_t state = ~crc;
  while (bytes > 0) {
    const std::size_t piece = std::min<std::size_t>(bytes, std::size_t{1} << 30);
    state = crc32_iscsi(at, static_cast<int>(piece), state);
    at += piece;
    bytes -= piece;
  }
  return ~state;
}

std::uint64_t tfrecord_data_length(const char* header) {
  std::uint64_t length = 0;
  std::memcpy(&length, header, 8);
  return length;
}

const char* tfrecord_frame_end(const char* begin, const char* end) {
  const auto available = static_cast<std::uint64_t>(end - begin);
  if (available < kTfrecordOverheadBytes) return nullptr;
  const std::uint64_t length = tfrecord_data_length(begin);
  if (length > available - kTfrecordOverheadBytes) return nullptr;
  return begin + kTfrecordOverheadBytes + length;
}

void check_tfrecord_frame(const char* begin, const char* available_end, std::uint64_t input_bytes_left,
                          std::uint64_t offset, const std::string& display_name) {
  const auto available = static_cast<std::uint64_t>(available_end - begin);
  if (available < kTfrecordHeaderBytes) {
    if (input_bytes_left < kTfrecordHeaderBytes) {
      throw InputError(where(display_name, offset) + " is truncated: " + std::to_string(input_bytes_left) +
                       " bytes left, a frame header needs " + std::to_string(kTfrecordHeaderBytes));
    }
    return;
  }
  // 1. The length's CRC, before the length is trusted.
  const std::uint32_t length_crc = mask_tfrecord_crc(crc32c(begin, 8));
  if (load_u32(begin + 8) != length_crc) {
    throw InputError(where(display_name, offset) + ": length CRC mismatch (stored " + hex(load_u32(begin + 8)) +
                     ", computed " + hex(length_crc) + ")");
  }
  // 2. The frame must fit in what is left of the input.
  const std::uint64_t length = tfrecord_data_length(begin);
  if (input_bytes_left < kTfrecordOverheadBytes || length > input_bytes_left - kTfrecordOverheadBytes) {
    throw InputError(where(display_name, offset) + " is truncated: it holds " + std::to_string(length) +
                     " bytes of data, the input has " + std::to_string(input_bytes_left) + " bytes left");
  }
  // 3. The data's CRC, once all of it is there.
  if (available < kTfrecordOverheadBytes + length) return;
  const char* data = begin + kTfrecordHeaderBytes;
  const std::uint32_t data_crc = mask_tfrecord_crc(crc32c(data, length));
  if (load_u32(data + length) != data_crc) {
    throw InputError(where(display_name, offset) + ": data CRC mismatch (stored " + hex(load_u32(data + length)) +
                     ", computed " + hex(data_crc) + ")");
  }
}

void append_tfrecord_frame(std::string& out, std::string_view data) {
  const std::uint64_t length = data.size();
  char header[8];
  std::memcpy(header, &length, 8);
  out.append(header, 8);
  store_u32(out, mask_tfrecord_crc(crc32c(header, 8)));
  out.append(data);
  store_u32(out, mask_tfrecord_crc(crc32c(data.data(), data.size())));
}

}  // namespace extshuffle::formats
