#include "extshuffle/formats/tar.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "extshuffle/errors.hpp"

namespace extshuffle::formats {
namespace {

constexpr std::size_t kNameOffset = 0, kNameBytes = 100;
constexpr std::size_t kSizeOffset = 124, kSizeBytes = 12;
constexpr std::size_t kChecksumOffset = 148, kChecksumBytes = 8;
constexpr std::size_t kTypeOffset = 156;
constexpr std::size_t kMagicOffset = 257;
constexpr std::size_t kPrefixOffset = 345, kPrefixBytes = 155;

std::uint64_t padded(std::uint64_t bytes) { return (bytes + kTarBlockBytes - 1) / kTarBlockBytes * kTarBlockBytes; }

// A NUL-terminated field (all of it when it has no NUL).
std::string field_text(const char* field, std::size_t width) {
  const void* nul = std::memchr(field, '\0', width);
  return std::string(field, nul ? static_cast<const char*>(nul) - field : width);
}

// A numeric field: octal digits between optional spaces and a NUL or space
// (ustar), or GNU's base-256 (the first byte's top bit set, big-endian).
bool parse_number(const char* field, std::size_t width, std::uint64_t& value) {
  value = 0;
  const auto* bytes = reinterpret_cast<const unsigned char*>(field);
  if (bytes[0] & 0x80) {
    if (bytes[0] != 0x80) return false;  // negative, or too large for 64 bits
    for (std::size_t k = 1; k < width; ++k) {
      if (value >> 56) return false;
      value = value << 8 | bytes[k];
    }
    return true;
  }
  std::size_t k = 0;
  while (k < width && field[k] == ' ') ++k;
  for (; k < width && field[k] >= '0' && field[k] <= '7'; ++k) {
    if (value >> 61) return false;
    value = value << 3 | static_cast<std::uint64_t>(field[k] - '0');
  }
  for (; k < width; ++k) {
    if (field[k] != ' ' && field[k] != '\0') return false;
  }
  return true;
}

bool all_zero(const char* block) {
  for (std::size_t k = 0; k < kTarBlockBytes; ++k) {
    if (block[k] != 0) return false;
  }
  return true;
}

std::string shown(std::string_view text) {
  std::string out;
  for (char c : text.substr(0, 80)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  return "'" + out + (text.size() > 80 ? "...'" : "'");
}

std::string type_name(char type) {
  switch (type) {
    case 'S': return "a GNU sparse file ('S')";
    case 'M': return "a GNU multi-volume continuation ('M')";
    case 'V': return "a GNU volume label ('V')";
    case 'D': return "a GNU directory dump ('D')";
    default: break;
  }
  if (type >= 0x20 && type < 0x7f) return std::string("of type '") + type + "'";
  return "of type " + std::to_string(static_cast<unsigned char>(type));
}

}  // namespace

std::string_view tar_sample_key(std::string_view path) {
  const std::size_t slash = path.rfind('/');
  const std::size_t start = slash == std::string_view::npos ? 0 : slash + 1;
  // webdataset's rule, ^((?:.*/|)[^.]+)[.]([^/]*)$: at least one byte before the dot.
  const std::size_t dot = start + 1 < path.size() ? path.find('.', start + 1) : std::string_view::npos;
  return dot == std::string_view::npos ? path : path.substr(0, dot);
}

const char* tar_frame_end(const char* begin, const char* end) {
  const auto available = static_cast<std::uint64_t>(end - begin);
  if (available < kTarFrameBytes) return nullptr;
  std::uint64_t length = 0;
  std::memcpy(&length, begin, kTarFrameBytes);
  if (length > available - kTarFrameBytes) return nullptr;
  return begin + kTarFrameBytes + length;
}

void append_tar_frame(std::string& out, std::string_view sample) {
  const std::uint64_t length = sample.size();
  char prefix[kTarFrameBytes];
  std::memcpy(prefix, &length, kTarFrameBytes);
  out.append(prefix, kTarFrameBytes);
  out.append(sample);
}

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "frame prefixes are little-endian integers");

TarScanner::TarScanner(std::string display_name, bool check_repeats, SampleSink on_sample, bool ignore_zeros)
    : display_name_(std::move(display_name)), check_repeats_(check_repeats), ignore_zeros_(ignore_zeros),
      on_sample_(std::move(on_sample)) {}

std::string TarScanner::where(std::uint64_t offset) const {
  return "input " + display_name_ + ": tar header at byte " + std::to_string(offset);
}

void TarScanner::add(const char* data, std::size_t bytes) {
  while (bytes > 0) {
    std::size_t take = 0;
    switch (state_) {
      case State::kHeader:
        if (header_fill_ == 0 && !has_extended_) member_start_ = position_;
        take = std::min(bytes, kTarBlockBytes - header_fill_);
        std::memcpy(header_ + header_fill_, data, take);
        header_fill_ += take;
        break;
      case State::kExtended:
        if (extended_left_ > 0) {
          take = static_cast<std::size_t>(std::min<std::uint64_t>(bytes, extended_left_));
          extended_.append(data, take);
          extended_left_ -= take;
        } else {
          take = static_cast<std::size_t>(std::min<std::uint64_t>(bytes, padding_left_));
          padding_left_ -= take;
        }
        break;
      case State::kSkip:
        take = static_cast<std::size_t>(std::min<std::uint64_t>(bytes, skip_left_));
        skip_left_ -= take;
        break;
      case State::kTrailer:
        check_trailer(data, bytes);
        position_ += bytes;
        return;
    }
    if (on_sample_) member_bytes_.append(data, take);
    data += take;
    bytes -= take;
    position_ += take;
    if (state_ == State::kHeader && header_fill_ == kTarBlockBytes) {
      header_fill_ = 0;
      header_complete();
    } else if (state_ == State::kExtended && extended_left_ == 0 && padding_left_ == 0) {
      parse_extended();
    } else if (state_ == State::kSkip && skip_left_ == 0) {
      end_member();
    }
  }
}

void TarScanner::skip(std::uint64_t bytes) {
  if (bytes > skippable()) throw std::logic_error("TarScanner::skip past the member's data");
  skip_left_ -= bytes;
  position_ += bytes;
  if (skip_left_ == 0) end_member();
}

TarChecksum tar_header_checksum(const char* header) {
  // The header's bytes summed, its checksum field counted as spaces
  // (unsigned, or signed as some old tars wrote it).
  TarChecksum checksum;
  checksum.readable = parse_number(header + kChecksumOffset, kChecksumBytes, checksum.stored);
  std::int64_t signed_sum = 0;
  for (std::size_t k = 0; k < kTarBlockBytes; ++k) {
    const bool in_field = k >= kChecksumOffset && k < kChecksumOffset + kChecksumBytes;
    const char c = in_field ? ' ' : header[k];
    checksum.computed += static_cast<unsigned char>(c);
    signed_sum += static_cast<signed char>(c);
  }
  checksum.matches = checksum.readable &&
                     (checksum.stored == checksum.computed || static_cast<std::int64_t>(checksum.stored) == signed_sum);
  return checksum;
}

void TarScanner::header_complete() {
  const std::uint64_t at = position_ - kTarBlockBytes;
  // 1. A zero block ends the archive (its trailer; only zeros may follow),
  //    or, reading through zero blocks, is passed over.
  if (all_zero(header_)) {
    if (has_extended_) {
      throw InputError(where(member_start_) + ": an extended header is followed by the end of the archive, not by "
                       "its member");
    }
    member_bytes_.clear();
    if (ignore_zeros_) return;
    close_sample();
    index_.archive_end = at;
    index_.trailer_found = true;
    state_ = State::kTrailer;
    return;
  }
  // 2. The checksum.
  const TarChecksum checksum = tar_header_checksum(header_);
  if (!checksum.matches) {
    throw InputError(where(at) + ": checksum mismatch (stored " +
                     (checksum.readable ? std::to_string(checksum.stored) : "unreadable") + ", computed " +
                     std::to_string(checksum.computed) + "): not a tar archive, or a corrupt one");
  }
  const char type = header_[kTypeOffset];
  std::uint64_t size = 0;
  if (!parse_number(header_ + kSizeOffset, kSizeBytes, size)) throw InputError(where(at) + ": malformed size field");
  // 3. Extended headers describe the member after them.
  if (type == 'x' || type == 'L' || type == 'K') {
    if (size > kTarMaxExtendedBytes) {
      throw InputError(where(at) + ": an extended header of " + std::to_string(size) + " bytes (at most " +
                       std::to_string(kTarMaxExtendedBytes) + " are read)");
    }
    extended_type_ = type;
    extended_.clear();
    extended_left_ = size;
    padding_left_ = padded(size) - size;
    has_extended_ = true;
    state_ = State::kExtended;
    if (size == 0) parse_extended();
    return;
  }
  if (type == 'g') {
    throw InputError(where(at) + ": a pax global header ('g'): its settings would apply to every member after it, "
                     "which a shuffle cannot keep (not supported)");
  }
  // 4. The member: its name and size, the extended headers' first.
  std::string name;
  if (has_pax_path_) {
    name = pax_path_;
  } else if (has_gnu_long_name_) {
    name = gnu_long_name_;
  } else {
    name = field_text(header_ + kNameOffset, kNameBytes);
    if (std::memcmp(header_ + kMagicOffset, "ustar\0", 6) == 0) {
      const std::string prefix = field_text(header_ + kPrefixOffset, kPrefixBytes);
      if (!prefix.empty()) name = prefix + "/" + name;
    }
  }
  if (has_pax_size_) size = pax_size_;
  if (pax_sparse_) {
    throw InputError(where(at) + ": member " + shown(name) +
                     " is a GNU sparse file (pax GNU.sparse.* records), not a regular file, directory or link (not "
                     "supported: archive it without --sparse)");
  }
  has_extended_ = has_pax_path_ = has_gnu_long_name_ = has_pax_size_ = false;
  begin_member(name, type, size, position_);
}

void TarScanner::parse_extended() {
  state_ = State::kHeader;
  if (extended_type_ == 'L') {
    gnu_long_name_ = field_text(extended_.data(), extended_.size());
    has_gnu_long_name_ = true;
    return;
  }
  if (extended_type_ == 'K') return;  // a long link name: links are skipped, its bytes go with its member
  // pax records: "LENGTH KEY=VALUE\n", LENGTH counting the whole record.
  std::string_view rest(extended_);
  while (!rest.empty()) {
    const std::size_t space = rest.find(' ');
    std::uint64_t length = 0;
    bool ok = space != std::string_view::npos && space > 0 && space <= 20;
    for (std::size_t k = 0; ok && k < space; ++k) {
      ok = rest[k] >= '0' && rest[k] <= '9';
      length = length * 10 + static_cast<std::uint64_t>(rest[k] - '0');
    }
    ok = ok && length > space + 1 && length <= rest.size() && rest[length - 1] == '\n';
    const std::string_view record = ok ? rest.substr(space + 1, length - space - 2) : std::string_view();
    const std::size_t equals = record.find('=');
    if (!ok || equals == std::string_view::npos) {
      throw InputError(where(member_start_) + ": malformed pax record " + shown(rest.substr(0, rest.find('\n'))));
    }
    const std::string_view key = record.substr(0, equals), value = record.substr(equals + 1);
    if (key.starts_with("GNU.sparse.")) pax_sparse_ = true;  // its data is a map and the parts it maps
    if (key == "path") {
      pax_path_ = std::string(value);
      has_pax_path_ = true;
    } else if (key == "size") {
      std::uint64_t size = 0;
      bool digits = !value.empty() && value.size() <= 19;
      for (char c : value) {
        digits = digits && c >= '0' && c <= '9';
        size = size * 10 + static_cast<std::uint64_t>(c - '0');
      }
      if (!digits) throw InputError(where(member_start_) + ": malformed pax size " + shown(value));
      pax_size_ = size;
      has_pax_size_ = true;
    }
    rest.remove_prefix(length);
  }
}

void TarScanner::begin_member(const std::string& name, char type, std::uint64_t size, std::uint64_t data_offset) {
  const bool regular = type == '0' || type == '\0' || type == '7';
  const bool skipped = type >= '1' && type <= '6';
  if (!regular && !skipped) {
    throw InputError(where(data_offset - kTarBlockBytes) + ": member " + shown(name) + " is " + type_name(type) +
                     ", not a regular file, directory or link (not supported)");
  }
  member_name_ = name;
  member_in_sample_ = regular;
  if (!regular) {
    // As Python's tarfile reads them: a link, a directory, a device or a FIFO has no data.
    ++index_.skipped_members;
    if (type == '1') ++index_.hard_links;
    end_member();
    return;
  }
  // 1. A member whose key differs from the sample's starts the next sample.
  const std::string_view key = tar_sample_key(name);
  if (!in_sample_ || key != key_) {
    close_sample();
    in_sample_ = true;
    key_ = std::string(key);
    sample_offset_ = member_start_;
    sample_bytes_ = 0;
    if (on_sample_) sample_frame_.assign(kTarFrameBytes, '\0');
    if (index_.first_range.empty()) index_.first_key = key_;
    index_.first_range.push_back(index_.ranges.size());
    if (check_repeats_) {
      const auto [it, inserted] = seen_keys_.emplace(key_, member_start_);
      if (!inserted) {
        throw InputError("input " + display_name_ + ": sample key " + shown(key_) + " at byte " +
                         std::to_string(member_start_) + " repeats the sample at byte " + std::to_string(it->second) +
                         " with other members between them (a sample split in two)");
      }
    }
  }
  // 2. Its bytes: extended headers, header, data and padding.
  const std::uint64_t end = data_offset + padded(size);
  const bool joins = index_.ranges.size() > index_.first_range.back() &&
                     index_.ranges.back().offset + index_.ranges.back().bytes == member_start_;
  if (joins) {
    index_.ranges.back().bytes += end - member_start_;
  } else {
    index_.ranges.push_back({member_start_, end - member_start_});
  }
  sample_bytes_ += end - member_start_;
  ++index_.members;
  if (on_member_) on_member_(index_.first_range.size() - 1, name, data_offset, size);
  skip_left_ = padded(size);
  state_ = State::kSkip;
  if (skip_left_ == 0) end_member();
}

void TarScanner::end_member() {
  if (on_sample_ && member_in_sample_) sample_frame_ += member_bytes_;
  member_bytes_.clear();
  state_ = State::kHeader;
}

void TarScanner::close_sample() {
  if (!in_sample_) return;
  in_sample_ = false;
  index_.frame_lengths.push_back(sample_bytes_);
  index_.longest_sample_bytes = std::max(index_.longest_sample_bytes, sample_bytes_);
  index_.sample_bytes_squared += static_cast<double>(sample_bytes_) * static_cast<double>(sample_bytes_);
  index_.last_key = key_;
  if (on_sample_) {
    std::memcpy(sample_frame_.data(), &sample_bytes_, kTarFrameBytes);
    on_sample_(sample_frame_);
    sample_frame_.clear();
  }
}

void TarScanner::check_trailer(const char* data, std::size_t bytes) {
  const char* nonzero = std::find_if(data, data + bytes, [](char c) { return c != 0; });
  if (nonzero == data + bytes) return;
  const std::uint64_t at = position_ + static_cast<std::uint64_t>(nonzero - data);
  throw InputError("input " + display_name_ + ": data at byte " + std::to_string(at) +
                   " after the end-of-archive marker at byte " + std::to_string(index_.archive_end) +
                   " (archives concatenated?): give --ignore-zeros to read every archive in it, or name the "
                   "archives one by one");
}

TarIndex TarScanner::finish() {
  if (state_ != State::kTrailer) {
    if (state_ == State::kHeader && header_fill_ == 0 && !has_extended_) {
      // No trailer: the archive ends with the input (Python's tarfile reads it so too).
      close_sample();
      index_.archive_end = position_;
    } else if (state_ == State::kSkip) {
      throw InputError("input " + display_name_ + ": tar member " + shown(member_name_) + " at byte " +
                       std::to_string(member_start_) + " is truncated: the input ends " + std::to_string(skip_left_) +
                       " bytes before the member's end");
    } else if (state_ == State::kHeader && header_fill_ > 0) {
      throw InputError(where(position_ - header_fill_) + " is truncated: the input ends after " +
                       std::to_string(header_fill_) + " of its 512 bytes");
    } else {
      throw InputError(where(member_start_) + ": the input ends inside an extended header or before its member");
    }
  }
  index_.first_range.push_back(index_.ranges.size());
  seen_keys_.clear();
  return std::move(index_);
}

void TarFrameStripper::write(const std::byte* data, std::size_t bytes, const Sink& sink) {
  while (bytes > 0) {
    if (sample_left_ == 0) {
      const std::size_t take = std::min(bytes, kTarFrameBytes - prefix_fill_);
      std::memcpy(prefix_ + prefix_fill_, data, take);
      prefix_fill_ += take;
      data += take;
      bytes -= take;
      if (prefix_fill_ == kTarFrameBytes) {
        std::memcpy(&sample_left_, prefix_, kTarFrameBytes);
        prefix_fill_ = 0;
      }
      continue;
    }
    const std::size_t take = static_cast<std::size_t>(std::min<std::uint64_t>(bytes, sample_left_));
    sink(data, take);
    data += take;
    bytes -= take;
    sample_left_ -= take;
  }
}

}  // namespace extshuffle::formats
