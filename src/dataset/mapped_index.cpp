#include "extshuffle/dataset/mapped_index.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "extshuffle/errors.hpp"

namespace extshuffle::dataset {
namespace {

[[noreturn]] void not_an_index(const std::string& path, const std::string& why) {
  throw InputError("index '" + path + "': " + why);
}

}  // namespace

MappedIndex::MappedIndex(const std::string& path) : path_(path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw IoError("cannot open index", path, errno);
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int error = errno;
    ::close(fd);
    throw IoError("cannot open index", path, error);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    not_an_index(path, "not a regular file");
  }
  file_bytes_ = static_cast<std::uint64_t>(st.st_size);
  if (file_bytes_ < kIndexAlignment + kIndexFooterBytes) {
    ::close(fd);
    not_an_index(path, "holds " + std::to_string(file_bytes_) + " bytes: not an index, or a truncated one");
  }
  void* mapped = ::mmap(nullptr, file_bytes_, PROT_READ, MAP_SHARED, fd, 0);
  const int error = errno;
  ::close(fd);
  if (mapped == MAP_FAILED) throw IoError("cannot map index", path, error);
  base_ = static_cast<const std::byte*>(mapped);
  try {
    const auto* text = reinterpret_cast<const char*>(base_);
    if (std::string_view(text, kIndexPreamble.size()) != kIndexPreamble) {
      not_an_index(path, "not an extshuffle record index (it does not start as one)");
    }
    if (std::string_view(text + file_bytes_ - kIndexMagic.size(), kIndexMagic.size()) != kIndexMagic) {
      not_an_index(path, "truncated or damaged: it does not end as an index does");
    }
    std::memcpy(&header_offset_, text + file_bytes_ - kIndexFooterBytes, sizeof header_offset_);
    if (header_offset_ < kIndexAlignment || header_offset_ > file_bytes_ - kIndexFooterBytes) {
      not_an_index(path, "damaged: its footer points outside the file");
    }
    header_ = parse_index_header(
        std::string_view(text + header_offset_, file_bytes_ - kIndexFooterBytes - header_offset_), path);
    check_arrays();
  } catch (...) {
    ::munmap(const_cast<std::byte*>(base_), file_bytes_);
    throw;
  }
}

MappedIndex::~MappedIndex() { ::munmap(const_cast<std::byte*>(base_), file_bytes_); }

std::span<const std::uint64_t> MappedIndex::words(const std::string& name, std::uint64_t rows,
                                                  std::uint64_t columns) const {
  const auto at = header_.arrays.find(name);
  if (at == header_.arrays.end()) not_an_index(path_, "its header lists no array '" + name + "'");
  const IndexArray& array = at->second;
  const std::vector<std::uint64_t> shape =
      columns == 1 ? std::vector<std::uint64_t>{rows} : std::vector<std::uint64_t>{rows, columns};
  const bool fits = array.offset % kIndexAlignment == 0 && array.offset >= kIndexAlignment &&
                    array.offset <= header_offset_ && array.bytes <= header_offset_ - array.offset;
  if (array.dtype != "<u8" || array.shape != shape || rows > UINT64_MAX / 8 / columns ||
      array.bytes != rows * columns * 8 || !fits) {
    not_an_index(path_, "damaged: its array '" + name + "' is not where or what its header says");
  }
  return {reinterpret_cast<const std::uint64_t*>(base_ + array.offset), rows * columns};
}

void MappedIndex::check_arrays() {
  const std::uint64_t n = header_.records;
  const std::string& format = header_.reading.format;
  if (format == "npy" || format == "binary") {
    if (header_.reading.record_size == 0) not_an_index(path_, "damaged: fixed-size records of 0 bytes");
    return;
  }
  if (format == "tar") {
    const auto& arrays = header_.arrays;
    if (!arrays.count("ranges") || !arrays.count("members") || !arrays.count("names")) {
      not_an_index(path_, "its header lacks a tar archive's arrays");
    }
    ranges_ = words("ranges", arrays.at("ranges").shape.empty() ? 0 : arrays.at("ranges").shape[0], 2);
    range_first_ = words("range_first", n + 1, 1);
    members_ = words("members", arrays.at("members").shape.empty() ? 0 : arrays.at("members").shape[0], 3);
    member_first_ = words("member_first", n + 1, 1);
    const IndexArray& names = arrays.at("names");
    if (names.dtype != "|u1" || names.shape != std::vector<std::uint64_t>{names.bytes} ||
        names.offset > header_offset_ || names.bytes > header_offset_ - names.offset) {
      not_an_index(path_, "damaged: its array 'names' is not where or what its header says");
    }
    names_ = {reinterpret_cast<const char*>(base_ + names.offset), names.bytes};
    return;
  }
  if (header_.reading.skip_empty) {
    spans_ = words("spans", n, 2);
  } else {
    offsets_ = words("offsets", n + 1, 1);
  }
}

}  // namespace extshuffle::dataset
