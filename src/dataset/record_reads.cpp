#include "record_reads.hpp"

#include <sys/uio.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <vector>

#include "extshuffle/errors.hpp"
#include "extshuffle/formats/tar.hpp"
#include "extshuffle/formats/tfrecord.hpp"
#include "input_descriptors.hpp"

namespace extshuffle::dataset {
namespace {

using Read = ReadPlan::Read;
using Check = ReadPlan::Check;
using CheckKind = ReadPlan::CheckKind;

// Reads [offset, end) of `fd` into `pieces` (whose lengths add up to it),
// through short reads; the file ending first means it changed.
void read_all(int fd, const std::string& path, std::vector<iovec>& pieces, std::uint64_t offset, std::uint64_t end) {
  iovec* next = pieces.data();
  std::size_t left = pieces.size();
  std::uint64_t at = offset;
  while (left > 0) {
    const int count = static_cast<int>(std::min<std::size_t>(left, IOV_MAX));
    const ssize_t got = ::preadv(fd, next, count, static_cast<off_t>(at));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) throw IoError("cannot read input", path, errno);
    if (got == 0) {
      throw InputError(changed_since_index(
          path, "it ends at byte " + std::to_string(at) + ", its index has records up to byte " + std::to_string(end)));
    }
    at += static_cast<std::uint64_t>(got);
    auto done = static_cast<std::size_t>(got);
    while (left > 0 && done >= next->iov_len) {
      done -= next->iov_len;
      ++next;
      --left;
    }
    if (left > 0) {
      next->iov_base = static_cast<char*>(next->iov_base) + done;
      next->iov_len -= done;
    }
  }
}

[[noreturn]] void not_as_indexed(const IndexedInput& input, const Check& check, const std::string& what) {
  throw InputError(changed_since_index(
      input.path, "record " + std::to_string(check.record) + " at byte " + std::to_string(check.offset) + " " + what));
}

std::uint32_t load_u32(const std::byte* at) {
  std::uint32_t value = 0;
  std::memcpy(&value, at, sizeof value);
  return value;
}

// A TFRecord frame: its header (length and the length's CRC), its data, its
// data's CRC (the CLI checked them when it counted the records).
void check_frame(const IndexedInput& input, const Check& check, const std::byte* header, const std::byte* data,
                 std::uint64_t data_bytes, const std::byte* footer) {
  const std::uint64_t length = formats::tfrecord_data_length(reinterpret_cast<const char*>(header));
  if (length != data_bytes) not_as_indexed(input, check, "is not a TFRecord frame of the length indexed");
  const auto crc = [](const std::byte* bytes, std::size_t size) {
    return formats::mask_tfrecord_crc(formats::crc32c(bytes, size));
  };
  if (crc(header, 8) != load_u32(header + 8) || crc(data, data_bytes) != load_u32(footer)) {
    not_as_indexed(input, check, "does not match its TFRecord CRCs");
  }
}

}  // namespace

void read_runs(int fd, const std::string& path, std::span<const Read* const> reads, std::span<std::byte* const> targets,
               std::byte* scratch) {
  std::vector<std::byte> gap(kJoinGapBytes);
  std::vector<iovec> pieces;
  for (std::size_t first = 0; first < reads.size();) {
    const std::uint64_t start = reads[first]->offset;
    std::uint64_t at = start;
    pieces.clear();
    std::size_t next = first;
    for (; next < reads.size(); ++next) {
      const Read& read = *reads[next];
      if (read.offset < at || read.offset - at > kJoinGapBytes || pieces.size() + 2 > IOV_MAX) break;
      if (read.offset > at) pieces.push_back({gap.data(), static_cast<std::size_t>(read.offset - at)});
      std::byte* target =
          read.segment >= 0 ? targets[static_cast<std::size_t>(read.segment)] + read.at : scratch + read.at;
      if (read.bytes > 0) pieces.push_back({target, static_cast<std::size_t>(read.bytes)});
      at = read.offset + read.bytes;
    }
    read_all(fd, path, pieces, start, at);
    first = next;
  }
}

void check_read(const IndexedInput& input, const Check& check, const ReadPlan& plan,
                std::span<std::byte* const> targets, const std::byte* scratch) {
  const auto terminator = static_cast<std::byte>(input.layout.reading.zero_terminated ? '\0' : '\n');
  const auto segment = static_cast<std::size_t>(check.segment);
  std::byte* target = check.segment >= 0 ? targets[segment] : nullptr;
  const std::uint64_t bytes = check.segment >= 0 ? plan.segment_bytes[segment] : 0;
  switch (check.kind) {
    case CheckKind::kTerminator:
      if (scratch[check.at] != terminator) not_as_indexed(input, check, "does not end with its terminator");
      return;
    case CheckKind::kRawTerminator:
      if (target[bytes - 1] != terminator) not_as_indexed(input, check, "does not end with its terminator");
      return;
    case CheckKind::kAddTerminator: target[bytes - 1] = terminator; return;
    case CheckKind::kFrame:
      check_frame(input, check, scratch + check.at, target, bytes, scratch + check.at + formats::kTfrecordHeaderBytes);
      return;
    case CheckKind::kRawFrame:
      check_frame(input, check, target, target + formats::kTfrecordHeaderBytes, bytes - formats::kTfrecordOverheadBytes,
                  target + bytes - formats::kTfrecordFooterBytes);
      return;
    case CheckKind::kTarHeader: {
      const std::byte* block = target != nullptr ? target : scratch + check.at;
      if (!formats::tar_header_checksum(reinterpret_cast<const char*>(block)).matches) {
        not_as_indexed(input, check, "does not start with a valid tar header");
      }
      return;
    }
  }
}

}  // namespace extshuffle::dataset
