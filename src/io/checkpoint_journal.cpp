#include "extshuffle/io/checkpoint_journal.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "extshuffle/errors.hpp"
#include "extshuffle/io/crc32c.hpp"
#include "extshuffle/io/positioned_write.hpp"

namespace extshuffle::io {
namespace {

constexpr std::uint32_t kMagic = 0x314a5358;  // "XSJ1"
constexpr std::uint64_t kHeaderBytes = 16;    // magic, type, payload length
constexpr std::uint64_t kTrailerBytes = 4;    // CRC-32C
constexpr std::uint64_t kMaxPayloadBytes = std::uint64_t{1} << 30;
// Space reserved ahead of the records: a full disk then fails the
// reservation, between two records, not the write of one.
constexpr std::uint64_t kReserveBytes = std::uint64_t{1} << 20;

std::uint32_t journal_load32(const char* at) {
  std::uint32_t value = 0;
  for (int k = 3; k >= 0; --k) value = value << 8 | static_cast<unsigned char>(at[k]);
  return value;
}

std::uint64_t journal_load64(const char* at) {
  std::uint64_t value = 0;
  for (int k = 7; k >= 0; --k) value = value << 8 | static_cast<unsigned char>(at[k]);
  return value;
}

void journal_store(std::string& to, std::uint64_t value, int bytes) {
  for (int k = 0; k < bytes; ++k) to.push_back(static_cast<char>(value >> (8 * k)));
}

std::uint32_t journal_crc(const char* data, std::uint64_t bytes) { return crc32c(kCrc32cStart, data, bytes); }

std::string journal_encode(std::uint32_t type, std::string_view payload) {
  std::string record;
  record.reserve(kHeaderBytes + payload.size() + kTrailerBytes);
  journal_store(record, kMagic, 4);
  journal_store(record, type, 4);
  journal_store(record, payload.size(), 8);
  record.append(payload);
  journal_store(record, journal_crc(record.data() + 4, record.size() - 4), 4);
  return record;
}

std::string journal_bytes(int fd, const std::string& path) {
  std::string text;
  char piece[1 << 16];
  for (std::uint64_t offset = 0;;) {
    const ssize_t got = ::pread(fd, piece, sizeof piece, static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) throw IoError("cannot read checkpoint journal", path, errno);
    if (got == 0) return text;
    text.append(piece, static_cast<std::size_t>(got));
    offset += static_cast<std::uint64_t>(got);
  }
}

// The whole records of `text`; what follows them is a torn tail when it
// reaches the end of the file without a whole record, or is all zeros.
JournalContents journal_parse(const std::string& text, const std::string& path) {
  JournalContents contents;
  std::uint64_t at = 0;
  while (at < text.size()) {
    const std::uint64_t left = text.size() - at;
    const char* record = text.data() + at;
    const bool header = left >= kHeaderBytes && journal_load32(record) == kMagic;
    const std::uint64_t payload = header ? journal_load64(record + 8) : 0;
    const bool sized = header && payload <= kMaxPayloadBytes;
    const std::uint64_t extent = kHeaderBytes + payload + kTrailerBytes;
    const bool whole =
        sized && extent <= left &&
        journal_crc(record + 4, extent - 4 - kTrailerBytes) == journal_load32(record + extent - kTrailerBytes);
    if (!whole) {
      const bool zeros =
          std::all_of(text.begin() + static_cast<std::ptrdiff_t>(at), text.end(), [](char c) { return c == 0; });
      const bool reaches_end = left < kHeaderBytes || (sized && extent >= left);
      if (!zeros && !reaches_end) {
        throw Error("checkpoint journal '" + path + "' is damaged at byte " + std::to_string(at) +
                    " (a record fails its checksum): it is not trusted; remove the checkpoint directory's files to "
                    "start over");
      }
      contents.torn_tail = true;
      break;
    }
    contents.records.push_back({journal_load32(record + 4), std::string(record + kHeaderBytes, payload)});
    at += extent;
  }
  contents.whole_bytes = at;
  return contents;
}

}  // namespace

JournalContents read_journal(const CheckpointDirectory& directory, const std::string& name) {
  const int fd = directory.open_file(name, false);
  if (fd < 0) return {};
  JournalContents contents;
  try {
    contents = journal_parse(journal_bytes(fd, directory.path() + "/" + name), directory.path() + "/" + name);
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
  return contents;
}

CheckpointJournal::CheckpointJournal(CheckpointDirectory& directory, const std::string& name)
    : directory_(directory), name_(name), fd_(directory.open_file(name, true)) {
  const std::string path = directory.path() + "/" + name;
  try {
    read_ = journal_parse(journal_bytes(fd_, path), path);
    end_ = read_.whole_bytes;
    if (read_.torn_tail && ::ftruncate(fd_, static_cast<off_t>(end_)) != 0) {
      throw IoError("cannot cut the torn end of checkpoint journal", path, errno);
    }
  } catch (...) {
    ::close(fd_);
    throw;
  }
  reserved_ = end_;
}

CheckpointJournal::~CheckpointJournal() {
  if (fd_ >= 0) ::close(fd_);
}

void CheckpointJournal::reserve(std::uint64_t bytes) {
  if (end_ + bytes <= reserved_) return;
  const std::uint64_t want = end_ + bytes + kReserveBytes;
  if (::fallocate(fd_, FALLOC_FL_KEEP_SIZE, static_cast<off_t>(reserved_), static_cast<off_t>(want - reserved_)) != 0) {
    if (errno != EOPNOTSUPP && errno != ENOSYS) {
      throw IoError("cannot write checkpoint journal", directory_.path() + "/" + name_, errno);
    }
  }
  reserved_ = want;
}

void CheckpointJournal::append(std::uint32_t type, std::string_view payload) {
  const std::string record = journal_encode(type, payload);
  const std::string path = directory_.path() + "/" + name_;
  reserve(record.size());
  try {
    try {
      write_at(fd_, reinterpret_cast<const std::byte*>(record.data()), record.size(), end_, path);
    } catch (const IoError& e) {
      throw IoError("cannot write checkpoint journal", path, e.error_number());
    }
    if (::fdatasync(fd_) != 0) throw IoError("cannot sync checkpoint journal", path, errno);
  } catch (...) {
    // Whatever landed of this record is cut off: the next append starts
    // where the whole records end, and the next reader finds none of it.
    (void)::ftruncate(fd_, static_cast<off_t>(end_));
    throw;
  }
  end_ += record.size();
}

void CheckpointJournal::rewrite(const std::vector<JournalRecord>& records) {
  const std::string fresh = name_ + ".new";
  const std::string path = directory_.path() + "/" + fresh;
  (void)::unlinkat(directory_.descriptor(), fresh.c_str(), 0);
  const int fd = directory_.open_file(fresh, true);
  std::string text;
  for (const JournalRecord& r : records) text += journal_encode(r.type, r.payload);
  try {
    try {
      write_at(fd, reinterpret_cast<const std::byte*>(text.data()), text.size(), 0, path);
    } catch (const IoError& e) {
      throw IoError("cannot write checkpoint journal", path, e.error_number());
    }
    if (::fdatasync(fd) != 0) throw IoError("cannot sync checkpoint journal", path, errno);
    if (::renameat(directory_.descriptor(), fresh.c_str(), directory_.descriptor(), name_.c_str()) != 0) {
      throw IoError("cannot replace checkpoint journal", directory_.path() + "/" + name_, errno);
    }
  } catch (...) {
    ::close(fd);
    (void)::unlinkat(directory_.descriptor(), fresh.c_str(), 0);
    throw;
  }
  (void)::fsync(directory_.descriptor());
  ::close(fd_);
  fd_ = fd;
  end_ = reserved_ = text.size();
}

void FieldWriter::u64(std::uint64_t value) { journal_store(text_, value, 8); }

void FieldWriter::bytes(std::string_view value) {
  u64(value.size());
  text_.append(value);
}

std::uint64_t FieldReader::u64() {
  if (rest_.size() < 8) throw Error("checkpoint journal: a record is shorter than its fields: not trusted");
  const std::uint64_t value = journal_load64(rest_.data());
  rest_.remove_prefix(8);
  return value;
}

std::string FieldReader::bytes() {
  const std::uint64_t size = u64();
  if (rest_.size() < size) throw Error("checkpoint journal: a record is shorter than its fields: not trusted");
  std::string value(rest_.substr(0, size));
  rest_.remove_prefix(size);
  return value;
}

}  // namespace extshuffle::io
